"""The stage ladder (docs/method.md#stages) as pure ``DataFrame -> DataFrame`` transforms.

Each stage takes the output of the stage it builds on, so the ladder is cumulative:
``sliding(tumbling(join(parse(ingest(raw)))))``, and the variant
``tumbling_union(parse(ingest(raw)))``. The same functions work on
streaming and static DataFrames, which is how the unit tests check them without
Kafka. Every stage's output carries the input broker timestamps
(``input_ts_latest``/``input_ts_earliest``, epoch ms) and ``input_count``;
columns whose name starts with ``_`` are internal and never written.

``raw`` is what the Kafka source gives: topic, partition, offset, timestamp
(the broker's LogAppendTime) and value.
"""

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from engines.spark.malformed import valid_input
from engines.spark.schema import struct
from ground.contract import (
    FLOW,
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_FIELDS,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    KIND,
    LANE,
    LANES_SEEN,
    LOCATION_ID,
    NUM_LANES,
    OBSERVATION_TS,
    RECORD,
    SECOND_MS,
    SEQ,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
    SPEED,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    WINDOW_END,
    WINDOW_START,
)

EVENT_TIME = "_event_time"
"""Internal timestamp column carrying the watermark (observation time) between stages."""
PARSE_METRIC = "parse"
"""Name of the observed metric with the parse stage's record and malformed counts."""

INPUT_SCHEMA = struct(INPUT_FIELDS)
"""Typed input message; speed and flow are doubles so either JSON number form parses."""
IDENTITY = (SOURCE_TOPIC, SOURCE_PARTITION, SOURCE_OFFSET)
TIMES = (INPUT_TS_LATEST, INPUT_TS_EARLIEST, INPUT_COUNT)


def _ms(millis: int) -> str:
    return f"{millis} milliseconds"


def ingest(raw: DataFrame) -> DataFrame:
    """Each Kafka record unchanged: its identity, broker timestamp and value (as text)."""
    broker_ts = F.unix_millis(F.col("timestamp"))
    return raw.select(
        F.col("topic").alias(SOURCE_TOPIC),
        F.col("partition").alias(SOURCE_PARTITION),
        F.col("offset").alias(SOURCE_OFFSET),
        broker_ts.alias(INPUT_TS_LATEST),
        broker_ts.alias(INPUT_TS_EARLIEST),
        F.lit(1).alias(INPUT_COUNT),
        F.col("value").cast("string").alias(RECORD),
    )


def parse(ingested: DataFrame, metric: Any = PARSE_METRIC) -> DataFrame:
    """Typed columns of each valid record; malformed ones are counted and dropped.

    ``metric`` is the name (or a ``pyspark.sql.Observation``) of the observed metric
    with ``records`` and ``malformed`` counts; a streaming query reports it in each
    progress event. Malformed: what :mod:`ground.malformed` says
    (:func:`engines.spark.malformed.valid_input`).
    """
    parsed = ingested.withColumn("_p", F.from_json(F.col(RECORD), INPUT_SCHEMA))
    speed = F.col(f"_p.{SPEED}")
    flagged = parsed.withColumn("_valid", valid_input(F.col(RECORD), F.col("_p").getField))
    observed = flagged.observe(
        metric,
        F.count(F.lit(1)).alias("records"),
        F.count(F.when(~F.col("_valid"), 1)).alias("malformed"),
    )
    kind = F.when(speed.isNotNull(), F.lit(SPEED)).otherwise(F.lit(FLOW))
    return observed.filter(F.col("_valid")).select(
        *IDENTITY,
        kind.alias(KIND),
        *(F.col(f"_p.{f.name}").alias(f.name) for f in INPUT_SCHEMA.fields),
        *TIMES,
    )


def join(parsed: DataFrame, watermark_delay_ms: int, range_ms: int = 0) -> DataFrame:
    """Inner join of speed and flow observations on location, lane and observation time.

    Both sides get a watermark on the observation time and the condition bounds the
    event-time difference by ``range_ms``, so Spark can drop join state (docs/method.md#stages).
    """
    event_time = F.timestamp_millis(F.col(OBSERVATION_TS))

    def side(kind: str, prefix: str) -> DataFrame:
        return (
            parsed.filter(F.col(KIND) == kind)
            .select(
                *(
                    F.col(c).alias(prefix + c)
                    for c in (LOCATION_ID, LANE, OBSERVATION_TS, kind, SEQ, NUM_LANES)
                ),
                F.col(INPUT_TS_LATEST).alias(prefix + "ts"),
                event_time.alias(prefix + "et"),
            )
            .withWatermark(prefix + "et", _ms(watermark_delay_ms))
        )

    s, f = side(SPEED, "s_"), side(FLOW, "f_")
    condition = (
        (F.col("s_" + LOCATION_ID) == F.col("f_" + LOCATION_ID))
        & (F.col("s_" + LANE) == F.col("f_" + LANE))
        & (F.col("s_" + OBSERVATION_TS) == F.col("f_" + OBSERVATION_TS))
        & F.expr(
            f"s_et BETWEEN f_et - INTERVAL {range_ms} MILLISECONDS "
            f"AND f_et + INTERVAL {range_ms} MILLISECONDS"
        )
    )
    return s.join(f, condition, "inner").select(
        F.col("s_" + LOCATION_ID).alias(LOCATION_ID),
        F.col("s_" + LANE).alias(LANE),
        F.col("s_" + OBSERVATION_TS).alias(OBSERVATION_TS),
        F.col("s_" + SPEED).alias(SPEED),
        F.col("f_" + FLOW).alias(FLOW),
        F.col("s_" + SEQ).alias(SEQ),
        F.col("s_" + NUM_LANES).alias(NUM_LANES),
        F.greatest("s_ts", "f_ts").alias(INPUT_TS_LATEST),
        F.least("s_ts", "f_ts").alias(INPUT_TS_EARLIEST),
        F.lit(2).alias(INPUT_COUNT),
        F.col("s_et").alias(EVENT_TIME),
    )


def _location_seconds(rows: DataFrame) -> DataFrame:
    """Per location and 1 s window of ``rows``' event time: the flow sum, mean speed,
    lanes seen, num_lanes and the carried input times and count, with the window as
    ``_w`` (the tumbling window's outputs, from joined pairs or from the inputs)."""
    window = F.window(F.col(EVENT_TIME), "1 second")
    agg = rows.groupBy(F.col(LOCATION_ID), window.alias("_w")).agg(
        F.sum(FLOW).alias(FLOW_SUM),
        F.avg(SPEED).alias(SPEED_AVG),
        F.size(F.collect_set(LANE)).alias(LANES_SEEN),
        F.max(NUM_LANES).alias(NUM_LANES),
        F.max(INPUT_TS_LATEST).alias(INPUT_TS_LATEST),
        F.min(INPUT_TS_EARLIEST).alias(INPUT_TS_EARLIEST),
        F.sum(INPUT_COUNT).alias(INPUT_COUNT),
    )
    return agg.select(
        LOCATION_ID,
        F.unix_millis(F.col("_w.start")).alias(WINDOW_START),
        F.unix_millis(F.col("_w.end")).alias(WINDOW_END),
        FLOW_SUM,
        SPEED_AVG,
        LANES_SEEN,
        NUM_LANES,
        *TIMES,
        "_w",
    )


def tumbling(joined: DataFrame) -> DataFrame:
    """1 s event-time tumbling window per location: flow sum, mean speed, lanes seen."""
    seconds = _location_seconds(joined)
    return seconds.withColumn(EVENT_TIME, F.window_time(F.col("_w"))).drop("_w")


def tumbling_union(parsed: DataFrame, watermark_delay_ms: int) -> DataFrame:
    """The tumbling window's outputs aggregated straight from the parsed inputs.

    The one Kafka source reads both topics, so the parsed stream is the union of
    speed and flow; grouping it by location and second, with no join, gives what the
    tumbling stage gives when every speed has its flow twin: the flows' sum, the
    speeds' mean, the lanes seen, the inputs' count and times. A plan of one
    streaming aggregation is what Spark's real-time mode runs; written in update
    mode, a window goes out each time an input changes it (a speed alone leaves the
    flow sum null until its flow arrives).
    """
    timed = parsed.withColumn(EVENT_TIME, F.timestamp_millis(F.col(OBSERVATION_TS)))
    timed = timed.withWatermark(EVENT_TIME, _ms(watermark_delay_ms))
    return _location_seconds(timed).drop("_w")


def _change(now: Column, then: Column) -> Column:
    """(now − then) / then; null when the earlier second is missing or zero."""
    return F.when(then.isNotNull() & (then != 0), (now - then) / then)


def sliding(
    tumbled: DataFrame, length_ms: int, slide_ms: int, short_ms: int, long_ms: int
) -> DataFrame:
    """Sliding window over the tumbling output per location: relative flow and speed change.

    One output per window whose last second ``t`` (= end − 1 s) has a tumbling result;
    the changes compare second ``t`` with ``t − short`` and ``t − long``.
    """
    window = F.window(F.col(EVENT_TIME), _ms(length_ms), _ms(slide_ms))
    seconds = F.collect_list(F.struct(WINDOW_START, FLOW_SUM, SPEED_AVG, *TIMES)).alias("_s")
    agg = tumbled.groupBy(F.col(LOCATION_ID), window.alias("_w")).agg(seconds)
    end = F.unix_millis(F.col("_w.end"))

    def at(back_ms: int) -> Column:
        second = end - SECOND_MS - back_ms
        return F.get(F.filter(F.col("_s"), lambda x: x[WINDOW_START] == second), 0)

    now, short, long = at(0), at(short_ms), at(long_ms)
    return (
        agg.withColumn("_now", now)
        .filter(F.col("_now").isNotNull())
        .select(
            LOCATION_ID,
            F.unix_millis(F.col("_w.start")).alias(WINDOW_START),
            end.alias(WINDOW_END),
            F.col(f"_now.{FLOW_SUM}").alias(FLOW_SUM),
            F.col(f"_now.{SPEED_AVG}").alias(SPEED_AVG),
            _change(now[FLOW_SUM], short[FLOW_SUM]).alias(FLOW_CHANGE_SHORT),
            _change(now[FLOW_SUM], long[FLOW_SUM]).alias(FLOW_CHANGE_LONG),
            _change(now[SPEED_AVG], short[SPEED_AVG]).alias(SPEED_CHANGE_SHORT),
            _change(now[SPEED_AVG], long[SPEED_AVG]).alias(SPEED_CHANGE_LONG),
            F.array_max(F.col(f"_s.{INPUT_TS_LATEST}")).alias(INPUT_TS_LATEST),
            F.array_min(F.col(f"_s.{INPUT_TS_EARLIEST}")).alias(INPUT_TS_EARLIEST),
            F.aggregate(
                F.col(f"_s.{INPUT_COUNT}"), F.lit(0).cast("long"), lambda a, x: a + x
            ).alias(INPUT_COUNT),
        )
    )
