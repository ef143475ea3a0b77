"""Per stage: which output fields the evaluator reads, and of which types.

Which fields identify an output is the stage table's (:mod:`ground.stages`).
"""

from collections.abc import Iterable

import pyarrow as pa

from ground import contract as s
from ground.stages import stage as stage_table

TIMES = (s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST)


def _schema(names: Iterable[str]) -> pa.Schema:
    """The Arrow types of the message fields ``names``: their logical types, which are
    spelt as pyarrow's aliases (:data:`ground.contract.FIELD_TYPES`)."""
    return pa.schema([(name, pa.type_for_alias(s.FIELD_TYPES[name])) for name in names])


VALUES: dict[str, tuple[str, ...]] = {
    "parse": (s.SPEED, s.FLOW),
    "join": (s.SPEED, s.FLOW),
    "tumbling": (s.FLOW_SUM, s.SPEED_AVG, s.LANES_SEEN),
    "tumbling-union": (s.FLOW_SUM, s.SPEED_AVG, s.LANES_SEEN),
    "sliding": (
        s.FLOW_SUM,
        s.SPEED_AVG,
        s.FLOW_CHANGE_SHORT,
        s.FLOW_CHANGE_LONG,
        s.SPEED_CHANGE_SHORT,
        s.SPEED_CHANGE_LONG,
    ),
}
"""Per stage, the output values the evaluator recomputes from the inputs and checks
(:mod:`evaluator.outputs.checks`); ingest and the floor copy values, which their identity checks."""

_EXTRA: dict[str, tuple[str, ...]] = {"tumbling": (s.NUM_LANES,), "tumbling-union": (s.NUM_LANES,)}

INPUT_SCHEMA = _schema(s.INPUT_FIELDS)
"""Every input field; a value with another field is malformed (:mod:`ground.malformed`)."""
SCHEDULE_SCHEMA = _schema((s.SCHEDULED_TS,))
"""What a raw stage's inputs are read for: their intended send time
(:mod:`evaluator.latencies.intended`)."""


def required_fields(stage: str) -> tuple[str, ...]:
    """The output fields without which an output cannot be measured or matched.

    The one definition of a **malformed output**: its value
    is not a JSON object whose fields have the types of :func:`output_schema`
    (one field of the wrong type makes the whole value malformed; ingest
    recovers the fields of a value that embeds invalid JSON), or one of these
    fields is missing or null. Malformed outputs are counted
    (``records.malformed_outputs``) and excluded from every other number.
    """
    return tuple(dict.fromkeys((*TIMES, *stage_table(stage).identity)))


def output_schema(stage: str) -> pa.Schema:
    """The output fields the evaluator reads for ``stage`` (others are ignored)."""
    names = (
        *TIMES,
        s.INPUT_COUNT,
        *stage_table(stage).identity,
        *VALUES.get(stage, ()),
        *_EXTRA.get(stage, ()),
    )
    return _schema(dict.fromkeys(names))
