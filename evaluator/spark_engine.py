"""The evaluation as a Spark batch job, for runs too big for one process's memory.

Same definitions as the pandas engine (:mod:`evaluator.evaluation`), expressed
with Spark DataFrames over the Kafka batch source: the end offsets are fixed
once before reading (so every Spark action sees the same records), latencies
come from the Kafka ``timestamp`` column, and percentiles use Spark's exact
``percentile`` (linear interpolation, as numpy's default), so both engines
give identical statistics. Only small results (the statistics, the per-second
series) come back to the driver; latencies.parquet is written by Spark.
"""

import json
import logging
from typing import Any

import pandas as pd
import pyarrow as pa
from confluent_kafka import Consumer
from pyspark.sql import Window
from pyspark.sql import functions as F

from evaluator import reader, stages
from evaluator.completeness import empty_counts
from evaluator.config import EvaluatorConfig
from evaluator.latency import IN_RANGE, LATENCY, LATENCY_EARLIEST, measured_period
from evaluator.reader import MALFORMED as BAD
from evaluator.reader import OFFSET, PARTITION, TIMESTAMP_TYPE, TOPIC, not_log_append_time
from evaluator.reader import TIMESTAMP as TS
from evaluator.run_info import RunInfo
from evaluator.stats import PERCENTILES, timeseries
from evaluator.steady import steady_state
from evaluator.throughput import peak_output, throughput
from ground import contract as s
from ground.contract import SECOND_MS
from ground.errors import EvaluationError
from ground.jvm.spark import build_session
from ground.stages import stage

log = logging.getLogger(__name__)

SPARK_LOG_APPEND_TIME = 1
"""The Kafka source's ``timestampType`` code for LogAppendTime (confluent-kafka uses 2)."""
NO_PARTIAL_RESULTS = {"spark.sql.json.enablePartialResults": "false"}
"""A JSON value with one mistyped field parses to nulls only (a session conf, not
a ``from_json`` option), so malformed outputs are the pandas reader's."""


def evaluate_frames(bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> dict[str, Any]:
    """Everything the report needs, computed by Spark (a local session by default)."""

    conf = {"spark.sql.shuffle.partitions": "2", **NO_PARTIAL_RESULTS}
    spark = build_session("stagebench-evaluate", conf=conf)
    return measure_spark(spark, bootstrap, run, config)


def _kafka(spark, bootstrap: str, topics: tuple[str, ...]):
    """The topics up to their end offsets now, with broker ms timestamps; cached."""

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "stagebench-offsets"})
    try:
        ends = {
            t: {str(p): high for p, (_, high) in reader._end_offsets(consumer, t).items()}
            for t in topics
        }
    finally:
        consumer.close()
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
        .option("startingOffsets", "earliest")
        .option("endingOffsets", json.dumps(ends))
        .load()
        .select(
            F.col("topic").alias(TOPIC),
            F.col("partition").alias(PARTITION),
            F.col("offset").alias(OFFSET),
            F.unix_millis("timestamp").alias(TS),
            F.col("timestampType").alias(TIMESTAMP_TYPE),
            F.col("value").cast("string").alias("_value"),
        )
        .cache()
    )
    counts = frame.agg(
        F.count(F.lit(1)).alias("total"),
        F.count(F.when(F.col(TIMESTAMP_TYPE) != SPARK_LOG_APPEND_TIME, 1)).alias("bad"),
    ).first()
    if counts["bad"]:
        frame.unpersist()
        raise not_log_append_time(",".join(topics), counts["bad"], counts["total"])
    return frame


def _spark_type(arrow_type) -> str:
    if pa.types.is_integer(arrow_type):
        return "bigint"
    if pa.types.is_floating(arrow_type):
        return "double"
    return "string"


def _parsed(frame, schema, recover: bool):
    """Parse ``_value`` into the schema's columns as the pandas reader does.

    A field of the wrong type nulls the whole value (``from_json`` without
    partial results, see :data:`NO_PARTIAL_RESULTS`, as the reader's ``_typed``
    refuses the record), and a string field must hold a JSON string
    (``from_json`` would turn a number into its text). ``recover`` adds the
    ingest fallback of the pandas reader (scalar fields of an invalid-JSON value).
    """

    ddl = ", ".join(f"`{f.name}` {_spark_type(f.type)}" for f in schema)
    parsed = frame.withColumn("_json", F.from_json("_value", ddl))
    cols = []
    for f in schema:
        kind = _spark_type(f.type)
        raw = F.regexp_extract("_value", reader._FIELD.format(f.name), 1)
        col = F.col(f"_json.`{f.name}`")
        if kind == "string":
            col = F.when(raw.startswith('"'), col)
        if recover:
            if kind == "string":
                fallback = F.when(raw.startswith('"'), F.regexp_replace(raw, '^"|"$', ""))
            elif kind == "bigint":
                fallback = F.when(raw.rlike(r"^-?\d+$"), raw.try_cast(kind))
            else:
                fallback = F.when(raw.rlike(r"^-?\d"), raw.try_cast(kind))
            col = F.coalesce(col, fallback)
        cols.append(col.cast(kind).alias(f.name))
    return parsed.select(TOPIC, PARTITION, OFFSET, TS, "_value", *cols)


def measure_spark(spark, bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> dict[str, Any]:

    for key, value in NO_PARTIAL_RESULTS.items():
        spark.conf.set(key, value)
    identity = list(stage(run.stage).identity)
    out_raw = _kafka(spark, bootstrap, (run.output_topic,))
    outputs = _parsed(out_raw, stages.output_schema(run.stage), stage(run.stage).raw)
    # malformed outputs as evaluator.stages.required_fields defines them
    good_cond = F.lit(True)
    for name in stages.required_fields(run.stage):
        good_cond &= F.col(name).isNotNull()
    outputs = outputs.withColumn(BAD, ~good_cond).cache()
    malformed_outputs = outputs.filter(F.col(BAD)).count()
    outputs_total = out_raw.count()
    good = outputs.filter(~F.col(BAD)).drop(BAD, "_value")

    inputs = None
    if run.input_topics:
        in_raw = _kafka(spark, bootstrap, run.input_topics)
        inputs = in_raw if stage(run.stage).raw else _valid_inputs(in_raw)
        inputs = inputs.cache()
        bounds = inputs.agg(F.min(TS), F.max(TS), F.count(F.lit(1))).first()
    else:
        bounds = good.agg(F.min(s.INPUT_TS_LATEST), F.max(s.INPUT_TS_LATEST), F.lit(0)).first()
    if bounds[0] is None:
        raise EvaluationError(
            f"nothing to evaluate: output topic {run.output_topic!r} has no valid records "
            "and no input records were read"
        )
    period = measured_period(int(bounds[0]), int(bounds[1]), config, run.start_ms, run.end_ms)

    def in_period(col: str):
        return (F.col(col) >= period.lo) & (F.col(col) <= period.hi)

    good = good.withColumns(
        {
            LATENCY: F.col(TS) - F.col(s.INPUT_TS_LATEST),
            LATENCY_EARLIEST: F.col(TS) - F.col(s.INPUT_TS_EARLIEST),
            IN_RANGE: in_period(s.INPUT_TS_LATEST),
        }
    ).cache()
    measured = good.filter(F.col(IN_RANGE))

    n_measured = measured.count()
    records: dict[str, Any] = empty_counts(
        n_measured, n_measured - measured.select(*identity).distinct().count()
    )
    if run.stage == "tumbling":
        records["partial_window_outputs"] = measured.filter(
            F.col(s.LANES_SEEN) < F.col(s.NUM_LANES)
        ).count()
    malformed_inputs = None
    inputs_total = inputs_measured = 0
    if inputs is not None:
        inputs_total = inputs.count()
        inputs_measured = inputs.filter(in_period(TS)).count()
        if not stage(run.stage).raw:
            malformed_inputs = inputs.filter(~F.col("_valid")).count()
        expected_all = _expected(run.stage, inputs, config.sliding_window_s).cache()
        expected_in = expected_all.filter(in_period(s.INPUT_TS_LATEST))
        unique_out = good.dropDuplicates(identity).select(
            *identity, F.col(s.INPUT_TS_LATEST).alias("_out_latest")
        )
        matched = expected_in.join(unique_out, identity, "left")
        records["expected"] = expected_in.count()
        records["missing"] = matched.filter(F.col("_out_latest").isNull()).count()
        records["input_ts_mismatch"] = matched.filter(
            F.col("_out_latest").isNotNull() & (F.col("_out_latest") != F.col(s.INPUT_TS_LATEST))
        ).count()
        records["unexpected"] = measured.join(
            expected_all.select(*identity).distinct(), identity, "left_anti"
        ).count()
        if run.stage in ("tumbling", "sliding"):
            records["partial_windows"] = expected_in.filter(
                F.col(s.LANES_SEEN) < F.col(s.NUM_LANES)
            ).count()
    records.update(
        {
            "negative": measured.filter(F.col(LATENCY) < 0).count(),
            "negative_earliest": measured.filter(F.col(LATENCY_EARLIEST) < 0).count(),
            "malformed_inputs": malformed_inputs,
            "malformed_outputs": malformed_outputs,
            "outside_window": good.count() - records["outputs"],
            "inputs": inputs_total,
            "inputs_measured": inputs_measured,
            "outputs_total": outputs_total,
        }
    )

    latencies = good.select(
        F.col(PARTITION).alias("partition"),
        F.col(OFFSET).alias("offset"),
        F.col(TS).alias("timestamp"),
        *[c for c in good.columns if not c.startswith("_") and c not in (PARTITION, OFFSET, TS)],
    )
    in_ts = inputs.select(TS) if inputs is not None else None
    series = _timeseries(good, in_ts)
    measured_series = _timeseries(measured, None)
    out_times = good.agg(
        F.min(TS).alias("first"), F.count(F.when(in_period(TS), 1)).alias("in_period")
    ).first()
    first_output_delay = (
        int(out_times["first"]) - int(bounds[0])
        if inputs is not None and out_times["first"] is not None
        else None
    )
    return {
        "period": period,
        "latency_ms": _describe(measured, LATENCY),
        "latency_earliest_ms": _describe(measured, LATENCY_EARLIEST),
        "records": records,
        "throughput": throughput(
            inputs_measured,
            int(out_times["in_period"]),
            period,
            peak_output(series),
            first_output_delay,
        ),
        "timeseries": series,
        "steady_state": steady_state(
            measured_series["second"].to_numpy(), measured_series["latency_p50_ms"].to_numpy()
        ),
        # a bootstrap over every record needs them in memory, which this engine avoids
        "confidence": None,
        "latencies": None,
        "write_latencies": lambda path: latencies.write.mode("overwrite").parquet(str(path)),
        "engine": "spark",
    }


def _valid_inputs(raw):
    """Inputs parsed, with ``_valid`` as :func:`evaluator.expected.valid_mask` defines it."""

    parsed = _parsed(raw, stages.INPUT_SCHEMA, recover=False)
    allowed = F.array(*[F.lit(n) for n in s.INPUT_FIELDS])
    keys = F.json_object_keys("_value")
    valid = keys.isNotNull() & (F.size(F.array_except(keys, allowed)) == 0)
    for name in s.INPUT_FIELDS:
        if name not in s.KINDS:
            valid &= F.col(name).isNotNull()
    valid &= F.col(s.SPEED).isNotNull() != F.col(s.FLOW).isNotNull()
    return parsed.withColumn("_valid", F.coalesce(valid, F.lit(False))).drop("_value")


def _expected(name: str, inputs, window_s: int):
    if not stage(name).stateful:
        rows = inputs if stage(name).raw else inputs.filter(F.col("_valid"))
        return rows.select(
            F.col(TOPIC).alias(s.SOURCE_TOPIC),
            F.col(PARTITION).cast("bigint").alias(s.SOURCE_PARTITION),
            F.col(OFFSET).alias(s.SOURCE_OFFSET),
            F.col(TS).alias(s.INPUT_TS_LATEST),
            F.col(TS).alias(s.INPUT_TS_EARLIEST),
        )
    key = [s.LOCATION_ID, s.LANE, s.OBSERVATION_TS]
    valid = inputs.filter(F.col("_valid"))

    def side(kind: str, tag: str):
        # the first record of a key wins, as pandas' drop_duplicates(keep="first")

        rows = valid.filter(F.col(kind).isNotNull())
        first = Window.partitionBy(*key).orderBy(TOPIC, PARTITION, OFFSET)
        rows = rows.withColumn("_n", F.row_number().over(first)).filter(F.col("_n") == 1)
        return rows.select(
            *key, F.col(TS).alias(f"_ts_{tag}"), F.col(s.NUM_LANES).alias(f"_nl_{tag}")
        )

    joined = (
        side(s.SPEED, "s")
        .join(side(s.FLOW, "f"), key, "inner")
        .select(
            *key,
            F.greatest("_ts_s", "_ts_f").alias(s.INPUT_TS_LATEST),
            F.least("_ts_s", "_ts_f").alias(s.INPUT_TS_EARLIEST),
            F.lit(2).cast("bigint").alias(s.INPUT_COUNT),
            F.greatest("_nl_s", "_nl_f").alias(s.NUM_LANES),
        )
    )
    if name == "join":
        return joined
    tumbling = (
        joined.withColumn(s.WINDOW_START, F.floor(F.col(s.OBSERVATION_TS) / SECOND_MS) * SECOND_MS)
        .groupBy(s.LOCATION_ID, s.WINDOW_START)
        .agg(
            F.max(s.INPUT_TS_LATEST).alias(s.INPUT_TS_LATEST),
            F.min(s.INPUT_TS_EARLIEST).alias(s.INPUT_TS_EARLIEST),
            F.sum(s.INPUT_COUNT).alias(s.INPUT_COUNT),
            F.countDistinct(s.LANE).alias(s.LANES_SEEN),
            F.max(s.NUM_LANES).alias(s.NUM_LANES),
        )
        .withColumn(s.WINDOW_START, F.col(s.WINDOW_START).cast("bigint"))
    )
    if name == "tumbling":
        return tumbling
    shifted = tumbling.select(
        s.LOCATION_ID,
        F.explode(F.sequence(F.lit(0), F.lit(window_s - 1))).alias("_k"),
        s.WINDOW_START,
        s.INPUT_TS_LATEST,
        s.INPUT_TS_EARLIEST,
        s.INPUT_COUNT,
    ).withColumn("_last", F.col(s.WINDOW_START) + F.col("_k") * SECOND_MS)
    agg = shifted.groupBy(s.LOCATION_ID, "_last").agg(
        F.max(s.INPUT_TS_LATEST).alias(s.INPUT_TS_LATEST),
        F.min(s.INPUT_TS_EARLIEST).alias(s.INPUT_TS_EARLIEST),
        F.sum(s.INPUT_COUNT).alias(s.INPUT_COUNT),
    )
    last = tumbling.select(
        s.LOCATION_ID, F.col(s.WINDOW_START).alias("_last"), s.LANES_SEEN, s.NUM_LANES
    )
    return last.join(agg, [s.LOCATION_ID, "_last"], "inner").select(
        s.LOCATION_ID,
        (F.col("_last") + SECOND_MS - window_s * SECOND_MS).alias(s.WINDOW_START),
        (F.col("_last") + SECOND_MS).alias(s.WINDOW_END),
        s.INPUT_TS_LATEST,
        s.INPUT_TS_EARLIEST,
        s.INPUT_COUNT,
        s.LANES_SEEN,
        s.NUM_LANES,
    )


def _describe(frame, col: str) -> dict[str, Any]:

    fractions = [q / 100 for q in PERCENTILES.values()]
    row = frame.agg(
        F.count(col).alias("count"),
        F.avg(col).alias("mean"),
        F.min(col).alias("min"),
        F.percentile(F.col(col), F.array(*[F.lit(f) for f in fractions])).alias("qs"),
        F.max(col).alias("max"),
    ).first()
    if not row["count"]:
        return {"count": 0, "mean": None, "min": None, **dict.fromkeys(PERCENTILES), "max": None}
    result = {"count": int(row["count"]), "mean": float(row["mean"]), "min": float(row["min"])}
    result.update({k: float(q) for k, q in zip(PERCENTILES, row["qs"], strict=True)})
    result["max"] = float(row["max"])
    return result


def _timeseries(good, in_ts) -> pd.DataFrame:
    """Per broker second, as :func:`evaluator.stats.timeseries`."""

    per_out = (
        good.groupBy(F.floor(F.col(TS) / SECOND_MS).alias("second"))
        .agg(
            F.count(F.lit(1)).alias("output_count"),
            F.percentile(LATENCY, F.lit(0.5)).alias("latency_p50_ms"),
            F.percentile(LATENCY, F.lit(0.99)).alias("latency_p99_ms"),
        )
        .toPandas()
    )
    per_in = (
        in_ts.groupBy(F.floor(F.col(TS) / SECOND_MS).alias("second")).count().toPandas()
        if in_ts is not None
        else pd.DataFrame({"second": [], "count": []})
    )
    frame = per_out.set_index("second").join(
        per_in.set_index("second")["count"].rename("input_count"), how="outer"
    )
    if frame.empty:
        return timeseries([], [], [])
    full = range(int(frame.index.min()), int(frame.index.max()) + 1)
    frame = frame.reindex(full)
    frame.index.name = "second"
    for col in ("input_count", "output_count"):
        frame[col] = frame[col].fillna(0).astype("int64")
    return frame.reset_index()[
        ["second", "input_count", "output_count", "latency_p50_ms", "latency_p99_ms"]
    ]
