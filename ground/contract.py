"""The message contracts between publisher, engines and evaluator.

This is the only place that names message fields. The publisher writes input
messages, the engines parse them and write output messages, the evaluator
reads those; all three import the names from here.

Input message (topics ``speed`` and ``flow``, key = location id, value = compact
JSON of 150–220 bytes)::

    {"location_id": "RWS01_MONIBAS_0021hrl0414ra", "lane": 2,
     "observation_ts": 1763867400000, "speed": 87.3,
     "latitude": 52.123456, "longitude": 5.123456, "num_lanes": 3,
     "accuracy": 95.0, "seq": 1234, "scheduled_ts": 1763867400123}

- ``observation_ts``: start of the wall-clock second in which this minute of
  data is published (epoch ms); it is the event time of joins and windows.
- ``speed`` (km/h, in speed messages) or ``flow`` (vehicles per minute, in flow
  messages): exactly one of the two is present.
- ``seq``: per location and topic, gap-free from 0; the speed and flow twins
  of one location/lane/minute carry the same ``seq``.
- ``scheduled_ts``: when the publisher's schedule said to send it (epoch ms).

Output message (one output topic per run, value = JSON): the stage's result
fields plus :data:`INPUT_TS_LATEST`, :data:`INPUT_TS_EARLIEST` (broker
LogAppendTime of the latest/earliest input it was computed from, epoch ms),
:data:`INPUT_COUNT` and :data:`RUN_ID`.

Every scalar field has one logical type, in :data:`FIELD_TYPES`: the engines
derive their Spark types from it (:mod:`engines.spark.schema`), the evaluator its
Arrow types (:mod:`evaluator.topics.output_fields`), :mod:`ground.malformed` the JSON type an
input field must have.
"""

from typing import Final

# --- input message -------------------------------------------------------
LOCATION_ID: Final = "location_id"
LANE: Final = "lane"
OBSERVATION_TS: Final = "observation_ts"
SPEED: Final = "speed"
FLOW: Final = "flow"
LATITUDE: Final = "latitude"
LONGITUDE: Final = "longitude"
NUM_LANES: Final = "num_lanes"
ACCURACY: Final = "accuracy"
SEQ: Final = "seq"
SCHEDULED_TS: Final = "scheduled_ts"

KINDS: Final = (SPEED, FLOW)
"""The two measurement kinds; each has its own topic and value field."""

INPUT_FIELDS: Final = (
    LOCATION_ID,
    LANE,
    OBSERVATION_TS,
    SPEED,
    FLOW,
    LATITUDE,
    LONGITUDE,
    NUM_LANES,
    ACCURACY,
    SEQ,
    SCHEDULED_TS,
)

REQUIRED_FIELDS: Final = tuple(f for f in INPUT_FIELDS if f not in KINDS)
"""Fields every input message has (besides exactly one of speed and flow); their types
and ranges, and what makes a message malformed, are in :mod:`ground.malformed`."""

SECOND_MS: Final = 1000
"""Event-time granularity: one data minute is published per wall-clock second."""

MIN_VALUE_BYTES: Final = 150
MAX_VALUE_BYTES: Final = 220

# --- output message --------------------------------------------------------
INPUT_TS_LATEST: Final = "input_ts_latest"
INPUT_TS_EARLIEST: Final = "input_ts_earliest"
INPUT_COUNT: Final = "input_count"
RUN_ID: Final = "run_id"

# identity of an output, per stage (used by the evaluator's completeness check)
SOURCE_TOPIC: Final = "source_topic"
SOURCE_PARTITION: Final = "source_partition"
SOURCE_OFFSET: Final = "source_offset"
KIND: Final = "kind"
WINDOW_START: Final = "window_start"
WINDOW_END: Final = "window_end"
RECORD: Final = "record"
"""Ingest only: the input value, embedded unchanged as a JSON object."""

# tumbling and sliding results
FLOW_SUM: Final = "flow_sum"
SPEED_AVG: Final = "speed_avg"
LANES_SEEN: Final = "lanes_seen"
FLOW_CHANGE_SHORT: Final = "flow_change_short"
FLOW_CHANGE_LONG: Final = "flow_change_long"
SPEED_CHANGE_SHORT: Final = "speed_change_short"
SPEED_CHANGE_LONG: Final = "speed_change_long"

# --- field types ------------------------------------------------------------
STRING: Final = "string"
INT32: Final = "int32"
INT64: Final = "int64"
FLOAT64: Final = "float64"
"""The logical types of message fields, spelt as pyarrow's type aliases."""

FIELD_TYPES: Final[dict[str, str]] = {
    # input message (also the parse and join outputs' fields)
    LOCATION_ID: STRING,
    LANE: INT64,
    OBSERVATION_TS: INT64,
    SPEED: FLOAT64,
    FLOW: FLOAT64,
    LATITUDE: FLOAT64,
    LONGITUDE: FLOAT64,
    NUM_LANES: INT64,
    ACCURACY: FLOAT64,
    SEQ: INT64,
    SCHEDULED_TS: INT64,
    # output message
    RUN_ID: STRING,
    INPUT_TS_LATEST: INT64,
    INPUT_TS_EARLIEST: INT64,
    INPUT_COUNT: INT64,
    SOURCE_TOPIC: STRING,
    SOURCE_PARTITION: INT32,
    SOURCE_OFFSET: INT64,
    KIND: STRING,
    WINDOW_START: INT64,
    WINDOW_END: INT64,
    FLOW_SUM: FLOAT64,
    SPEED_AVG: FLOAT64,
    LANES_SEEN: INT64,
    FLOW_CHANGE_SHORT: FLOAT64,
    FLOW_CHANGE_LONG: FLOAT64,
    SPEED_CHANGE_SHORT: FLOAT64,
    SPEED_CHANGE_LONG: FLOAT64,
}
"""The type of every scalar field (:data:`RECORD` embeds the input message itself).
Speed and flow are floats although a JSON integer is a valid value of them; a
Kafka partition number (:data:`SOURCE_PARTITION`) is an int32 in Kafka and Spark."""
