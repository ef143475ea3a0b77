"""Per stage: which output fields the evaluator reads, and of which types.

Which fields identify an output is the stage table's (:mod:`ground.stages`).
"""

import pyarrow as pa

from ground import contract as s
from ground.stages import stage as stage_table

TIMES = (s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST)


_TYPES = {
    s.INPUT_TS_LATEST: pa.int64(),
    s.INPUT_TS_EARLIEST: pa.int64(),
    s.INPUT_COUNT: pa.int64(),
    s.SOURCE_TOPIC: pa.string(),
    s.SOURCE_PARTITION: pa.int32(),
    s.SOURCE_OFFSET: pa.int64(),
    s.LOCATION_ID: pa.string(),
    s.LANE: pa.int64(),
    s.OBSERVATION_TS: pa.int64(),
    s.WINDOW_START: pa.int64(),
    s.WINDOW_END: pa.int64(),
    s.LANES_SEEN: pa.int64(),
    s.NUM_LANES: pa.int64(),
    s.SPEED: pa.float64(),
    s.FLOW: pa.float64(),
    s.FLOW_SUM: pa.float64(),
    s.SPEED_AVG: pa.float64(),
    s.FLOW_CHANGE_SHORT: pa.float64(),
    s.FLOW_CHANGE_LONG: pa.float64(),
    s.SPEED_CHANGE_SHORT: pa.float64(),
    s.SPEED_CHANGE_LONG: pa.float64(),
}

VALUES: dict[str, tuple[str, ...]] = {
    "parse": (s.SPEED, s.FLOW),
    "join": (s.SPEED, s.FLOW),
    "tumbling": (s.FLOW_SUM, s.SPEED_AVG, s.LANES_SEEN),
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
(:mod:`evaluator.checks`); ingest and the floor copy values, which their identity checks."""

_EXTRA: dict[str, tuple[str, ...]] = {"tumbling": (s.NUM_LANES,)}

INPUT_SCHEMA = pa.schema(
    [
        (s.LOCATION_ID, pa.string()),
        (s.LANE, pa.int64()),
        (s.OBSERVATION_TS, pa.int64()),
        (s.SPEED, pa.float64()),
        (s.FLOW, pa.float64()),
        (s.LATITUDE, pa.float64()),
        (s.LONGITUDE, pa.float64()),
        (s.NUM_LANES, pa.int64()),
        (s.ACCURACY, pa.float64()),
        (s.SEQ, pa.int64()),
        (s.SCHEDULED_TS, pa.int64()),
    ]
)
"""Every input field; a value with another field is malformed (:mod:`ground.malformed`)."""


def required_fields(stage: str) -> tuple[str, ...]:
    """The output fields without which an output cannot be measured or matched.

    The one definition of a **malformed output**, used by both engines: its value
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
    return pa.schema([(n, _TYPES[n]) for n in dict.fromkeys(names)])
