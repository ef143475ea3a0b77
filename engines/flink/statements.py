"""The stage ladder as Flink SQL: pure functions from a :class:`PipelineConfig` to the
statements the runner executes (docs/method.md#stages).

Each stage is a view over the one it builds on, so the ladder is cumulative as on
Spark (:mod:`engines.spark.transforms`), with the same output fields and values: the
source table reads both topics with each record's topic, partition, offset and broker
timestamp (LogAppendTime) as metadata, and every stage carries ``input_ts_latest``,
``input_ts_earliest`` and ``input_count``. The join and the windows run on event time,
the observation time, whose watermark the source declares (``watermark_delay_ms``
behind the newest of each partition, the least of them all). The last view becomes a
Kafka sink table's ``value``, the JSON object Spark's sink writes; the location id is
the key where there is one. No Python function runs on the data path.
"""

from dataclasses import dataclass

from engines.config import PipelineConfig
from ground.contract import (
    FIELD_TYPES,
    FLOAT64,
    FLOW,
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_FIELDS,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    INT32,
    INT64,
    KIND,
    KINDS,
    LANE,
    LANES_SEEN,
    LOCATION_ID,
    NUM_LANES,
    OBSERVATION_TS,
    RECORD,
    REQUIRED_FIELDS,
    RUN_ID,
    SECOND_MS,
    SEQ,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
    SPEED,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    STRING,
    WINDOW_END,
    WINDOW_START,
)
from ground.malformed import MAX_INPUT_BYTES, RANGES
from ground.stages import chain
from ground.stages import stage as stage_table

SOURCE = "raw_input"
SINK = "stage_output"
EVENT_TIME = "et"
"""The rowtime column: the observation time, carried from the source to the windows."""
TIMES = (INPUT_TS_LATEST, INPUT_TS_EARLIEST, INPUT_COUNT)
_SQL_TYPES = {STRING: "STRING", INT32: "INT", INT64: "BIGINT", FLOAT64: "DOUBLE"}


@dataclass(frozen=True)
class Statements:
    """What the runner executes: the table settings, then the DDL, then one INSERT."""

    settings: dict[str, str]
    """Table configuration, set before any statement."""
    ddl: list[str]
    """The source and sink tables and the stages' views, in order."""
    insert: str
    """The one INSERT that starts the job."""

    def as_dict(self) -> dict[str, object]:
        return {"settings": self.settings, "ddl": self.ddl, "insert": self.insert}


def quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def with_options(options: dict[str, str]) -> str:
    return "WITH (\n" + ",\n".join(f"  {quote(k)} = {quote(v)}" for k, v in options.items()) + "\n)"


def seconds(millis: int) -> str:
    """An interval literal of ``millis``."""
    return f"INTERVAL '{millis / 1000:.3f}' SECOND"


def epoch_ms(column: str) -> str:
    """A TIMESTAMP_LTZ(3) or TIMESTAMP(3) (in the UTC session zone) as epoch milliseconds."""
    return f"(EXTRACT(EPOCH FROM {column}) * 1000 + EXTRACT(MILLISECOND FROM {column}))"


def source_table(
    config: PipelineConfig, group_id: str, kafka: dict[str, str], event_time: bool
) -> str:
    """The Kafka source of both topics: each record's identity, broker timestamp and value
    (as text); ``event_time``: also the observation time and its watermark."""
    columns = [
        "`topic` STRING METADATA FROM 'topic' VIRTUAL",
        "`partition` INT METADATA FROM 'partition' VIRTUAL",
        "`offset` BIGINT METADATA FROM 'offset' VIRTUAL",
        "`ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL",
        "`value` STRING",
    ]
    if event_time:
        observed = f"TRY_CAST(JSON_VALUE(`value`, '$.{OBSERVATION_TS}') AS BIGINT)"
        columns += [
            f"{EVENT_TIME} AS TO_TIMESTAMP_LTZ({observed}, 3)",
            f"WATERMARK FOR {EVENT_TIME} AS {EVENT_TIME} - {seconds(config.watermark_delay_ms)}",
        ]
    options = {
        "connector": "kafka",
        "topic": f"{config.speed_topic};{config.flow_topic}",
        "properties.bootstrap.servers": config.bootstrap,
        "properties.group.id": group_id,
        "scan.startup.mode": f"{config.starting_offsets}-offset",
        "format": "raw",
        **kafka,
    }
    body = ",\n  ".join(columns)
    return f"CREATE TABLE {SOURCE} (\n  {body}\n) {with_options(options)}"


def sink_table(config: PipelineConfig, kafka: dict[str, str], keyed: bool, updates: bool) -> str:
    """The Kafka sink: ``v``, the output's JSON, and ``k``, its location id (``keyed``).

    A stage that updates its outputs (``updates``) writes to an upsert sink keyed by its
    windows' identity, so that each insert and update goes out as one record and no
    retraction does: its key is the JSON of the location id and the window start."""
    options = {
        "connector": "upsert-kafka" if updates else "kafka",
        "topic": config.output_topic,
        "properties.bootstrap.servers": config.bootstrap,
        **kafka,
    }
    if updates:
        columns = ["k STRING", "ws BIGINT", "v STRING", "PRIMARY KEY (k, ws) NOT ENFORCED"]
        options |= {"key.format": "json", "value.format": "raw",
                    "value.fields-include": "EXCEPT_KEY"}  # fmt: skip
    elif keyed:
        columns = ["k STRING", "v STRING"]
        options |= {"key.format": "raw", "key.fields": "k", "value.format": "raw",
                    "value.fields-include": "EXCEPT_KEY"}  # fmt: skip
    else:
        columns = ["v STRING"]
        options["format"] = "raw"
    return f"CREATE TABLE {SINK} (\n  {', '.join(columns)}\n) {with_options(options)}"


def _ingest() -> str:
    return f"""SELECT `topic` AS {SOURCE_TOPIC}, `partition` AS {SOURCE_PARTITION},
  `offset` AS {SOURCE_OFFSET}, {epoch_ms("ts")} AS {INPUT_TS_LATEST},
  {epoch_ms("ts")} AS {INPUT_TS_EARLIEST}, CAST(1 AS BIGINT) AS {INPUT_COUNT},
  `value` AS {RECORD}{{et}}
FROM {SOURCE}"""


def _field(name: str) -> str:
    """A field's value of its type; null where absent, null or no number of that type.

    Numbers are read as text and cast: JSON_VALUE returns no BIGINT, and ``RETURNING
    DOUBLE`` fails the job on a JSON integer (ClassCastException: Integer to BigDecimal).
    """
    kind = _SQL_TYPES[FIELD_TYPES[name]]
    if kind == "STRING":
        return f"JSON_VALUE({RECORD}, '$.{name}')"
    return f"TRY_CAST(JSON_VALUE({RECORD}, '$.{name}') AS {kind})"


def _typed(name: str) -> str:
    """A present field of ``name``'s JSON type: a string, a number, an integer."""
    kind = FIELD_TYPES[name]
    integer = "-?[0-9]+\\s*[,}]"
    pattern = {STRING: '"', FLOAT64: "-?[0-9]", INT32: integer, INT64: integer}[kind]
    regex = '"' + name + '"\\s*:\\s*' + pattern
    return f"REGEXP({RECORD}, {quote(regex)})"


def _number(name: str, value: float) -> str:
    """A bound of field ``name``'s range as a literal of its type: a float field's as a
    DOUBLE (a decimal literal would make Flink compare in DECIMAL, where an input too
    large for it becomes null and passes)."""
    return f"{float(value):.6f}E0" if FIELD_TYPES[name] == FLOAT64 else str(int(value))


def valid_input() -> str:
    """Whether an ingested record is a valid input as :mod:`ground.malformed` defines it.

    A JSON object within :data:`ground.malformed.MAX_INPUT_BYTES` (its characters: the
    values are ASCII), of valid UTF-8 (no replacement character in a string field),
    with no key but the
    input fields (the number of its keys equals the number of known keys present), every
    required field of its JSON type and not empty, exactly one of speed and flow, every
    number within its range.
    """
    present = " + ".join(
        f"CASE WHEN JSON_EXISTS({RECORD}, '$.{name}') THEN 1 ELSE 0 END" for name in INPUT_FIELDS
    )
    checks = [
        f"{RECORD} IS JSON OBJECT",
        f"CHAR_LENGTH({RECORD}) <= {MAX_INPUT_BYTES}",
        f"JSON_VALUE({RECORD}, '$.size()' RETURNING INT) = {present}",
        f"(_{SPEED} IS NULL) <> (_{FLOW} IS NULL)",
    ]
    for name in REQUIRED_FIELDS:
        checks += [f"_{name} IS NOT NULL", _typed(name)]
        if FIELD_TYPES[name] == STRING:
            # Flink keeps the value's bytes as read; JSON_VALUE decodes a string field,
            # replacing invalid UTF-8 (outside a string it is no JSON)
            checks += [f"CHAR_LENGTH(_{name}) > 0", f"POSITION(U&'\\FFFD' IN _{name}) = 0"]
    for name in KINDS:
        checks.append(f"(_{name} IS NULL OR {_typed(name)})")
    for name, (low, high) in RANGES.items():
        inside = f"_{name} BETWEEN {_number(name, low)} AND {_number(name, high)}"
        checks.append(f"({inside})" if name not in KINDS else f"(_{name} IS NULL OR {inside})")
    return "\n  AND ".join(checks)


def _parse(carried: str) -> str:
    fields = ", ".join(f"{_field(name)} AS _{name}" for name in INPUT_FIELDS)
    named = ", ".join(f"_{name} AS {name}" for name in INPUT_FIELDS)
    identity = f"{SOURCE_TOPIC}, {SOURCE_PARTITION}, {SOURCE_OFFSET}"
    return f"""SELECT {identity},
  CASE WHEN _{SPEED} IS NOT NULL THEN '{SPEED}' ELSE '{FLOW}' END AS {KIND},
  {named}, {", ".join(TIMES)}{carried}
FROM (SELECT {identity}, {RECORD}, {", ".join(TIMES)}{carried}, {fields} FROM ingest)
WHERE {valid_input()}"""


def _join(range_ms: int) -> str:
    def side(kind: str, prefix: str) -> str:
        cols = ", ".join(
            f"{c} AS {prefix}{c}" for c in (LOCATION_ID, LANE, OBSERVATION_TS, kind, SEQ, NUM_LANES)
        )
        return (
            f"(SELECT {cols}, {INPUT_TS_LATEST} AS {prefix}ts, {EVENT_TIME} AS {prefix}et "
            f"FROM parse WHERE {KIND} = '{kind}')"
        )

    return f"""SELECT s_{LOCATION_ID} AS {LOCATION_ID}, s_{LANE} AS {LANE},
  s_{OBSERVATION_TS} AS {OBSERVATION_TS}, s_{SPEED} AS {SPEED}, f_{FLOW} AS {FLOW},
  s_{SEQ} AS {SEQ}, s_{NUM_LANES} AS {NUM_LANES},
  GREATEST(s_ts, f_ts) AS {INPUT_TS_LATEST}, LEAST(s_ts, f_ts) AS {INPUT_TS_EARLIEST},
  CAST(2 AS BIGINT) AS {INPUT_COUNT}, s_et AS {EVENT_TIME}
FROM {side(SPEED, "s_")} s, {side(FLOW, "f_")} f
WHERE s_{LOCATION_ID} = f_{LOCATION_ID} AND s_{LANE} = f_{LANE}
  AND s_{OBSERVATION_TS} = f_{OBSERVATION_TS}
  AND s_et BETWEEN f_et - {seconds(range_ms)} AND f_et + {seconds(range_ms)}"""


_SECOND_AGGREGATES = f"""SUM({FLOW}) AS {FLOW_SUM}, AVG({SPEED}) AS {SPEED_AVG},
  COUNT(DISTINCT {LANE}) AS {LANES_SEEN}, MAX({NUM_LANES}) AS {NUM_LANES},
  MAX({INPUT_TS_LATEST}) AS {INPUT_TS_LATEST}, MIN({INPUT_TS_EARLIEST}) AS {INPUT_TS_EARLIEST},
  SUM({INPUT_COUNT}) AS {INPUT_COUNT}"""


def _tumbling() -> str:
    """1 s event-time window per location, emitted when the watermark passes its end."""
    return f"""SELECT {LOCATION_ID}, {epoch_ms("window_start")} AS {WINDOW_START},
  {epoch_ms("window_end")} AS {WINDOW_END}, {_SECOND_AGGREGATES},
  window_time AS {EVENT_TIME}
FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR({EVENT_TIME}), INTERVAL '1' SECOND))
GROUP BY {LOCATION_ID}, window_start, window_end, window_time"""


def _tumbling_union() -> str:
    """The location-seconds of the parsed inputs, updated at every input (an updating
    aggregate: each update is written, as Spark's update mode)."""
    second = f"{OBSERVATION_TS} / {SECOND_MS} * {SECOND_MS}"
    return f"""SELECT {LOCATION_ID}, {WINDOW_START}, {WINDOW_START} + {SECOND_MS} AS {WINDOW_END},
  {_SECOND_AGGREGATES}
FROM (SELECT *, {second} AS {WINDOW_START} FROM parse)
GROUP BY {LOCATION_ID}, {WINDOW_START}"""


def _change(now: str, then: str) -> str:
    return f"CASE WHEN {then} IS NOT NULL AND {then} <> 0 THEN ({now} - {then}) / {then} END"


def _sliding(config: PipelineConfig) -> str:
    """The sliding window over the tumbling outputs: one output per window whose last
    second has a result, with the relative changes from ``lookback_short_ms`` and
    ``lookback_long_ms`` before it (null where that second is missing or zero)."""

    def at(field: str, back_ms: int) -> str:
        second = f"_end - {SECOND_MS + back_ms}"
        return f"MAX(CASE WHEN _second = {second} THEN {field} END)"

    short, long = config.lookback_short_ms, config.lookback_long_ms
    return f"""SELECT {LOCATION_ID}, {WINDOW_START}, {WINDOW_END}, {FLOW_SUM}, {SPEED_AVG},
  {_change(FLOW_SUM, "_flow_short")} AS {FLOW_CHANGE_SHORT},
  {_change(FLOW_SUM, "_flow_long")} AS {FLOW_CHANGE_LONG},
  {_change(SPEED_AVG, "_speed_short")} AS {SPEED_CHANGE_SHORT},
  {_change(SPEED_AVG, "_speed_long")} AS {SPEED_CHANGE_LONG},
  {", ".join(TIMES)}
FROM (
  SELECT {LOCATION_ID}, {epoch_ms("window_start")} AS {WINDOW_START}, _end AS {WINDOW_END},
    {at(FLOW_SUM, 0)} AS {FLOW_SUM}, {at(SPEED_AVG, 0)} AS {SPEED_AVG},
    {at(FLOW_SUM, short)} AS _flow_short, {at(FLOW_SUM, long)} AS _flow_long,
    {at(SPEED_AVG, short)} AS _speed_short, {at(SPEED_AVG, long)} AS _speed_long,
    MAX({INPUT_TS_LATEST}) AS {INPUT_TS_LATEST}, MIN({INPUT_TS_EARLIEST}) AS {INPUT_TS_EARLIEST},
    SUM({INPUT_COUNT}) AS {INPUT_COUNT},
    COUNT(CASE WHEN _second = _end - {SECOND_MS} THEN 1 END) AS _now
  FROM (
    SELECT *, {epoch_ms("window_end")} AS _end
    FROM TABLE(HOP(TABLE tumbled_seconds, DESCRIPTOR({EVENT_TIME}),
      {seconds(config.window_slide_ms)}, {seconds(config.window_length_ms)}))
  )
  GROUP BY {LOCATION_ID}, window_start, window_end, _end
)
WHERE _now > 0"""


OUTPUT_FIELDS: dict[str, tuple[str, ...]] = {
    "ingest": (SOURCE_TOPIC, SOURCE_PARTITION, SOURCE_OFFSET, *TIMES),
    "parse": (SOURCE_TOPIC, SOURCE_PARTITION, SOURCE_OFFSET, KIND, *INPUT_FIELDS, *TIMES),
    "join": (LOCATION_ID, LANE, OBSERVATION_TS, SPEED, FLOW, SEQ, NUM_LANES, *TIMES),
    "tumbling": (
        LOCATION_ID, WINDOW_START, WINDOW_END, FLOW_SUM, SPEED_AVG, LANES_SEEN, NUM_LANES, *TIMES,
    ),
    "sliding": (
        LOCATION_ID, WINDOW_START, WINDOW_END, FLOW_SUM, SPEED_AVG, FLOW_CHANGE_SHORT,
        FLOW_CHANGE_LONG, SPEED_CHANGE_SHORT, SPEED_CHANGE_LONG, *TIMES,
    ),
}  # fmt: skip
"""The fields each stage writes, in Spark's order (ingest: then ``record``)."""
OUTPUT_FIELDS["tumbling-union"] = OUTPUT_FIELDS["tumbling"]

_TUMBLED_SECONDS = f"""SELECT {LOCATION_ID}, {WINDOW_START} AS _second, {FLOW_SUM}, {SPEED_AVG},
  {", ".join(TIMES)}, {EVENT_TIME}
FROM tumbled"""
"""The tumbling outputs with their window start renamed: the sliding window's own
``window_start`` would clash with it."""


def stage_views(config: PipelineConfig) -> dict[str, list[tuple[str, str]]]:
    """Each stage's views (name, SELECT) with this configuration, by stage name; the
    last of a stage's views is its output."""
    carried = f", {EVENT_TIME}" if stage_table(config.stage).stateful else ""
    return {
        "ingest": [("ingest", _ingest().replace("{et}", carried))],
        "parse": [("parse", _parse(carried))],
        "join": [("joined", _join(config.join_range_ms))],
        "tumbling": [("tumbled", _tumbling())],
        "tumbling-union": [("seconds", _tumbling_union())],
        "sliding": [("tumbled_seconds", _TUMBLED_SECONDS), ("slid", _sliding(config))],
    }


def output_value(stage: str, view: str) -> str:
    """The SELECT of the sink's ``k`` and ``v`` from the last stage's view: ``v`` is the
    JSON object Spark writes (run id, then the stage's fields, nulls written as null;
    ingest's record spliced in unchanged, a null record making a null output)."""
    fields = ", ".join(f"KEY '{name}' VALUE {name}" for name in OUTPUT_FIELDS[stage])
    body = f"JSON_OBJECT(KEY '{RUN_ID}' VALUE _run_id, {fields} NULL ON NULL)"
    if stage == "ingest":
        body = (
            f"SUBSTRING({body} FROM 1 FOR CHAR_LENGTH({body}) - 1) || "
            f"',\"{RECORD}\":' || {RECORD} || '}}'"
        )
    key = f"{LOCATION_ID} AS k, " if LOCATION_ID in OUTPUT_FIELDS[stage] else ""
    if stage_table(stage).updates:
        key += f"{WINDOW_START} AS ws, "
    return f"SELECT {key}{body} AS v FROM {view}"


def statements(
    config: PipelineConfig,
    group_id: str,
    source_kafka: dict[str, str],
    sink_kafka: dict[str, str],
    settings: dict[str, str],
) -> Statements:
    """The whole job: ``settings``, the source (group ``group_id``, with ``source_kafka``
    options), the stages up to ``config.stage`` as views, the sink (``sink_kafka``)."""
    last = stage_table(config.stage)
    views = stage_views(config)
    ddl = [source_table(config, group_id, source_kafka, last.stateful)]
    view = SOURCE
    for step in chain(config.stage):
        for view, select in views.get(step.name, []):
            ddl.append(f"CREATE TEMPORARY VIEW {view} AS\n{select}")
    keyed = LOCATION_ID in OUTPUT_FIELDS[config.stage]
    ddl.append(sink_table(config, sink_kafka, keyed, last.updates))
    select = output_value(config.stage, view).replace("_run_id", quote(config.run_id))
    return Statements(settings, ddl, f"INSERT INTO {SINK}\n{select}")
