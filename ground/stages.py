"""The stage table: everything stagebench knows about a stage, in one place.

The ladder is cumulative (docs/method.md#stages): a run executes the pipeline up
to and including one stage (the stages it builds on, :func:`chain`), and comparing
runs stage by stage gives the latency each operation adds. Its first rung, the
floor, is no engine's stage: a minimal Kafka consume→produce loop whose latency every
engine's stage pays too. A variant computes a stage's outputs by another plan
(tumbling-union: the tumbling window without the join) and branches off the line
where its plan does. The table says what a stage means, not who runs it: each engine
says which stages it runs and how (:mod:`engines.base`). The engines build the
ladder, the evaluator checks the outputs, the bench validates combinations: each
asks this table instead of keeping its own list.
"""

from dataclasses import dataclass
from typing import Final

from ground import contract as c
from ground.errors import ConfigError

PROCESSING_TIME: Final = "processing-time"
"""The execution mode every engine has (its own loop or micro-batches), and the one a run
takes unless its engine is told another: a run in another mode is a variant of its stage
of its own (``builtin@MODE`` in a table)."""


@dataclass(frozen=True)
class Stage:
    name: str
    does: str
    """One line for help texts and reports."""
    raw: bool
    """Writes every input record back unchanged, malformed ones included (the output
    embeds the input value)."""
    stateful: bool
    """Keeps state across inputs (the join and the windows)."""
    window: bool
    """Emits one output per location and event-time window (tumbling, sliding)."""
    identity: tuple[str, ...]
    """Output fields that make two outputs the same output (duplicates) and match an
    output to the one its inputs imply (completeness)."""
    builds_on: str | None
    """The stage whose output this one transforms, and whose latency its increment is
    taken over (ingest: the floor, the round trip it pays too); a run executes the
    chain's stages its engine runs."""
    updates: bool = False
    """Writes a window again each time an input changes it (an update mode), so
    an output is a window's first update, a partial one or its complete one; the
    others emit a window once, when the watermark closes it."""
    variant_of: str | None = None
    """The stage whose outputs it computes by another plan; a suite runs it only when
    asked (``--stages``)."""
    own: bool = False
    """A user's own job: each output names the input it was computed from last, and
    nothing else about it is known (what it computes, which outputs must exist); a suite
    runs it only when asked."""


_RECORD_ID = (c.SOURCE_TOPIC, c.SOURCE_PARTITION, c.SOURCE_OFFSET)
_WINDOW_ID = (c.LOCATION_ID, c.WINDOW_START)

LADDER: Final[tuple[Stage, ...]] = (
    Stage("floor", "copy every record with a minimal Kafka consumer and producer (no engine)",
          raw=True, stateful=False, window=False, identity=_RECORD_ID, builds_on=None),
    Stage("ingest", "read the speed and flow topics, write every record back unchanged",
          raw=True, stateful=False, window=False, identity=_RECORD_ID, builds_on="floor"),
    Stage("parse", "parse the JSON values into typed columns",
          raw=False, stateful=False, window=False, identity=_RECORD_ID, builds_on="ingest"),
    Stage("join", "inner join of speed and flow of one location, lane and minute",
          raw=False, stateful=True, window=False,
          identity=(c.LOCATION_ID, c.LANE, c.OBSERVATION_TS), builds_on="parse"),
    Stage("tumbling", "1 s tumbling window per location: flow sum, mean speed, lanes",
          raw=False, stateful=True, window=True, identity=_WINDOW_ID, builds_on="join"),
    Stage("tumbling-union", "the tumbling window aggregated over the union of speed and "
          "flow, without the join, written at every update (a mode that cannot join can run it)",
          raw=False, stateful=True, window=True, identity=_WINDOW_ID, builds_on="parse",
          updates=True, variant_of="tumbling"),
    Stage("sliding", "sliding window over the tumbling output: relative changes",
          raw=False, stateful=True, window=True, identity=_WINDOW_ID, builds_on="tumbling"),
    Stage("job", "your own job: each output names the input it was computed from last "
          "(docs/own-pipeline.md)",
          raw=True, stateful=False, window=False, identity=_RECORD_ID, builds_on="floor",
          own=True),
)  # fmt: skip

STAGES: Final[tuple[str, ...]] = tuple(s.name for s in LADDER)
"""Stage names in ladder order."""
MAIN_LINE: Final[tuple[str, ...]] = tuple(
    s.name for s in LADDER if s.variant_of is None and not s.own
)
"""The ladder without its variants and a user's job: what a suite runs by default."""

_BY_NAME: Final = {s.name: s for s in LADDER}


def stage(name: str) -> Stage:
    """The stage called ``name``; ConfigError naming the known stages otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ConfigError(f"unknown stage {name!r} (stages: {', '.join(STAGES)})") from None


def deepest_first(name: str) -> tuple[int, int]:
    """A sort key that puts the deepest stage (the longest :func:`chain`) first, ties
    in ladder order."""
    return -len(chain(name)), STAGES.index(name)


def chain(name: str) -> tuple[Stage, ...]:
    """The stages ``name`` builds on and itself, first to last: ``chain("join")`` is
    floor, ingest, parse, join."""
    steps: list[Stage] = []
    current: str | None = name
    while current is not None:
        steps.append(stage(current))
        current = steps[-1].builds_on
    return tuple(reversed(steps))
