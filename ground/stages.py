"""The stage table: everything stagebench knows about a stage, in one place.

The ladder is cumulative (docs/method.md#stages): a run executes the pipeline up
to and including one stage, and comparing runs stage by stage gives the latency
each operation adds. Its first rung, the floor, is no Spark stage: a minimal
Kafka consume→produce loop whose latency every Spark stage pays too. The
pipelines build the ladder, the evaluator checks the outputs, the bench
validates combinations: each asks this table instead of keeping its own list.
"""

from dataclasses import dataclass
from typing import Final, Literal

from ground import contract as c
from ground.errors import ConfigError

Impl = Literal["builtin", "custom"]
IMPLS: Final[tuple[Impl, ...]] = ("builtin", "custom")
"""Spark's own operators, or transformWithStateInPandas state and timers (windows only)."""


@dataclass(frozen=True)
class Stage:
    name: str
    order: int
    """Position on the ladder, from 0 (the floor)."""
    does: str
    """One line for help texts and reports."""
    spark: bool
    """Runs on Spark. The floor is a plain Kafka consume→produce loop: the round trip
    every Spark stage pays on top of its own work."""
    raw: bool
    """Writes every input record back unchanged, malformed ones included (the output
    embeds the input value)."""
    stateful: bool
    """Keeps state across micro-batches (the join and every window after it)."""
    window: bool
    """Emits one output per location and event-time window (tumbling, sliding)."""
    custom: bool
    """Has a custom implementation (``impl = "custom"``) besides Spark's operators."""
    real_time: bool
    """Spark 4.3's real-time mode can run it. It runs no stream-stream join, and every
    stage from the join on contains one (the ladder is cumulative)."""
    identity: tuple[str, ...]
    """Output fields that make two outputs the same output (duplicates) and match an
    output to the one its inputs imply (completeness)."""

    @property
    def impls(self) -> tuple[Impl, ...]:
        return IMPLS if self.custom else ("builtin",)


_RECORD_ID = (c.SOURCE_TOPIC, c.SOURCE_PARTITION, c.SOURCE_OFFSET)
_WINDOW_ID = (c.LOCATION_ID, c.WINDOW_START)

LADDER: Final[tuple[Stage, ...]] = (
    Stage("floor", 0, "copy every record with a minimal Kafka consumer and producer (no Spark)",
          spark=False, raw=True, stateful=False, window=False, custom=False, real_time=False,
          identity=_RECORD_ID),
    Stage("ingest", 1, "read the speed and flow topics, write every record back unchanged",
          spark=True, raw=True, stateful=False, window=False, custom=False, real_time=True,
          identity=_RECORD_ID),
    Stage("parse", 2, "parse the JSON values into typed columns",
          spark=True, raw=False, stateful=False, window=False, custom=False, real_time=True,
          identity=_RECORD_ID),
    Stage("join", 3, "inner join of speed and flow of one location, lane and minute",
          spark=True, raw=False, stateful=True, window=False, custom=False, real_time=False,
          identity=(c.LOCATION_ID, c.LANE, c.OBSERVATION_TS)),
    Stage("tumbling", 4, "1 s tumbling window per location: flow sum, mean speed, lanes",
          spark=True, raw=False, stateful=True, window=True, custom=True, real_time=False,
          identity=_WINDOW_ID),
    Stage("sliding", 5, "sliding window over the tumbling output: relative changes",
          spark=True, raw=False, stateful=True, window=True, custom=True, real_time=False,
          identity=_WINDOW_ID),
)  # fmt: skip

STAGES: Final[tuple[str, ...]] = tuple(s.name for s in LADDER)
"""Stage names in ladder order."""
SPARK_STAGES: Final[tuple[str, ...]] = tuple(s.name for s in LADDER if s.spark)
"""The stages of the Spark pipeline, in order; a Spark run executes them up to its stage."""

_BY_NAME: Final = {s.name: s for s in LADDER}


def stage(name: str) -> Stage:
    """The stage called ``name``; ConfigError naming the known stages otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ConfigError(f"unknown stage {name!r} (stages: {', '.join(STAGES)})") from None


def check_impl(name: str, impl: str) -> None:
    """ConfigError unless ``stage(name)`` has the implementation ``impl``."""
    if impl not in IMPLS:
        raise ConfigError(f"impl must be one of {', '.join(IMPLS)}, got {impl!r}")
    if impl not in stage(name).impls:
        custom = [s.name for s in LADDER if s.custom]
        raise ConfigError(f"impl {impl!r} exists only for {custom}, not for stage {name!r}")
