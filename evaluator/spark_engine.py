"""The evaluation as a Spark batch job, for runs too big for one process's memory.

Same definitions as the pandas engine (:mod:`evaluator.evaluation`), expressed
with Spark DataFrames over the Kafka batch source: the end offsets are fixed
once before reading (so every Spark action sees the same records); each output
is joined by its identity to the output its inputs imply (:func:`_expected`,
as :func:`evaluator.expected.expected_outputs`), its latency is its Kafka
``timestamp`` minus the broker timestamps of those inputs, and its carried
fields and values are checked as :mod:`evaluator.checks` does. Percentiles
use Spark's exact ``percentile`` (linear interpolation, as numpy's default),
so both engines give identical statistics. Only small results (the counts,
the statistics, the per-second series, a few examples of wrong fields) come
back to the driver; latencies.parquet is written by Spark.
"""

import json
import logging
import math
from typing import Any

import pandas as pd
import pyarrow as pa
from confluent_kafka import Consumer
from pyspark.sql import Window
from pyspark.sql import functions as F

from evaluator import checks, reader, stages
from evaluator.completeness import MISSING_EXAMPLES, empty_counts, missing_section
from evaluator.config import EvaluatorConfig
from evaluator.expected import CHANGES
from evaluator.latency import EXPLAINED, IN_RANGE, LATENCY, LATENCY_EARLIEST, measured_period
from evaluator.reader import MALFORMED as BAD
from evaluator.reader import OFFSET, PARTITION, TIMESTAMP_TYPE, TOPIC, not_log_append_time
from evaluator.reader import TIMESTAMP as TS
from evaluator.run_info import RunInfo
from evaluator.stats import PERCENTILES, timeseries
from evaluator.steady import steady_state
from evaluator.throughput import peak_output, throughput
from ground import contract as s
from ground import malformed as m
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
    table = stage(run.stage)
    identity = list(table.identity)
    out_raw = _kafka(spark, bootstrap, (run.output_topic,))
    outputs = _parsed(out_raw, stages.output_schema(run.stage), table.raw)
    # malformed outputs as evaluator.stages.required_fields defines them
    good_cond = F.lit(True)
    for name in stages.required_fields(run.stage):
        good_cond &= F.col(name).isNotNull()
    outputs = outputs.withColumn(BAD, ~good_cond).cache()
    malformed_outputs = outputs.filter(F.col(BAD)).count()
    outputs_total = out_raw.count()
    good = outputs.filter(~F.col(BAD)).drop(BAD, "_value")

    inputs = expected_all = None
    first_input = None
    if run.input_topics:
        in_raw = _kafka(spark, bootstrap, run.input_topics)
        inputs = in_raw if table.raw else _valid_inputs(in_raw)
        inputs = inputs.cache()
        first_input, last_input = inputs.agg(F.min(TS), F.max(TS)).first()
        bounds = (first_input, last_input)
    if first_input is None:  # no input read: the period from the carried timestamps
        bounds = good.agg(F.min(s.INPUT_TS_LATEST), F.max(s.INPUT_TS_LATEST)).first()
    if bounds[0] is None:
        raise EvaluationError(
            f"nothing to evaluate: output topic {run.output_topic!r} has no valid records "
            "and no input records were read"
        )
    period = measured_period(int(bounds[0]), int(bounds[1]), config, run.start_ms, run.end_ms)

    def in_period(col):
        col = F.col(col) if isinstance(col, str) else col
        return (col >= period.lo) & (col <= period.hi)

    checked: list[str] = []
    if inputs is not None:
        lookbacks = (config.lookback_short_s, config.lookback_long_s)
        expected_all = _expected(run.stage, inputs, config.sliding_window_s, lookbacks).cache()
        # latency from the inputs' own timestamps, matched by identity; an output no
        # input explains keeps its carried time only to be counted (unexpected)
        checked = [
            c
            for c in (*checks.CARRIED, *stages.VALUES.get(run.stage, ()))
            if c in good.columns and c in expected_all.columns
        ]
        good = _explained(good, expected_all, identity, checked)
        latest, earliest = _derived(s.INPUT_TS_LATEST), _derived(s.INPUT_TS_EARLIEST)
    else:
        good = good.withColumn(EXPLAINED, F.lit(True))
        latest, earliest = F.col(s.INPUT_TS_LATEST), F.col(s.INPUT_TS_EARLIEST)
    good = good.withColumns(
        {
            LATENCY: F.col(TS) - latest,
            LATENCY_EARLIEST: F.col(TS) - earliest,
            IN_RANGE: in_period(latest),
        }
    ).cache()
    measured_all = good.filter(F.col(IN_RANGE))
    measured = measured_all.filter(F.col(EXPLAINED))

    # one pass over the outputs for every per-output count
    is_measured = F.col(IN_RANGE) & F.col(EXPLAINED)
    wrong_flags = {c: _wrong(c, exact=c in checks.CARRIED) for c in checked}
    value_flags = [flag for c, flag in wrong_flags.items() if c not in checks.CARRIED]
    any_value_wrong = F.lit(False)
    for flag in value_flags:
        any_value_wrong |= flag
    partial_output = (
        F.col(s.LANES_SEEN) < F.col(s.NUM_LANES) if run.stage == "tumbling" else F.lit(False)
    )
    per_output = {
        "good": F.lit(True),
        "outputs": F.col(IN_RANGE),
        "unexpected": F.col(IN_RANGE) & ~F.col(EXPLAINED),
        "partial_window_outputs": F.col(IN_RANGE) & partial_output,
        "negative": is_measured & (F.col(LATENCY) < 0),
        "negative_earliest": is_measured & (F.col(LATENCY_EARLIEST) < 0),
        "wrong_values": is_measured & any_value_wrong,
        "out_in_period": in_period(TS),
        **{f"_wrong_{c}": is_measured & flag for c, flag in wrong_flags.items()},
    }
    counts = good.agg(
        F.min(TS).alias("first"),
        F.max(TS).alias("last"),
        *[F.count(F.when(cond, 1)).alias(k) for k, cond in per_output.items()],
    ).first()

    n_measured = counts["outputs"]
    records: dict[str, Any] = empty_counts(
        n_measured, n_measured - measured_all.select(*identity).distinct().count()
    )
    if run.stage == "tumbling":
        records["partial_window_outputs"] = counts["partial_window_outputs"]
    malformed_inputs = by_kind = None
    inputs_total = inputs_measured = 0
    wrong: dict[str, dict] | None = None
    missing: dict | None = None
    carried: dict[str, int | None] = dict.fromkeys((*checks.CARRIED_KEYS, "wrong_values"))
    if inputs is not None:
        malformed = [] if table.raw else [F.count(F.when(~F.col("_valid"), 1)).alias("bad")]
        row = inputs.agg(
            F.count(F.lit(1)).alias("total"),
            F.count(F.when(in_period(TS), 1)).alias("measured"),
            *malformed,
        ).first()
        inputs_total, inputs_measured = row["total"], row["measured"]
        if malformed:
            malformed_inputs = row["bad"]
            by_kind = _malformed_by_kind(in_raw) if malformed_inputs else dict.fromkeys(m.KINDS, 0)
        expected_in = expected_all.filter(in_period(s.INPUT_TS_LATEST))
        found = good.select(*identity).distinct().withColumn("_found", F.lit(True))
        partial = F.col(s.LANES_SEEN) < F.col(s.NUM_LANES) if table.window else F.lit(False)
        matched = expected_in.join(found, identity, "left")
        row = matched.agg(
            F.count(F.lit(1)).alias("expected"),
            F.count(F.when(F.col("_found").isNull(), 1)).alias("missing"),
            F.count(F.when(partial, 1)).alias("partial_windows"),
        ).first()
        records.update(expected=row["expected"], missing=row["missing"])
        if row["missing"]:
            missing = _missing(matched.filter(F.col("_found").isNull()), identity)
        records["unexpected"] = counts["unexpected"]
        if table.window:
            records["partial_windows"] = row["partial_windows"]
        wrong_counts = {c: counts[f"_wrong_{c}"] for c in checked}
        carried = {
            key: wrong_counts.get(field, 0)
            for key, field in zip(checks.CARRIED_KEYS, checks.CARRIED, strict=True)
        }
        carried["wrong_values"] = counts["wrong_values"]
        wrong = {
            c: {"count": n, "examples": _examples(measured, wrong_flags[c], c, identity)}
            for c, n in wrong_counts.items()
            if n
        }
    records.update(carried)
    records.update(
        {
            "negative": counts["negative"],
            "negative_earliest": counts["negative_earliest"],
            "malformed_inputs": malformed_inputs,
            "malformed_inputs_by_kind": by_kind,
            "malformed_outputs": malformed_outputs,
            "outside_window": counts["good"] - n_measured,
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
    series = _timeseries(good.filter(F.col(EXPLAINED)), in_ts)
    measured_series = _timeseries(measured, None)
    first_output_delay = drain = None
    if first_input is not None and counts["first"] is not None:
        first_output_delay = int(counts["first"]) - int(first_input)
        drain = int(counts["last"]) - int(last_input)
    return {
        "period": period,
        "latency_ms": _describe(measured, LATENCY),
        "latency_earliest_ms": _describe(measured, LATENCY_EARLIEST),
        "records": records,
        "missing": missing,
        "wrong": wrong,
        "throughput": throughput(
            inputs_measured,
            int(counts["out_in_period"]),
            period,
            peak_output(series),
            first_output_delay,
            drain,
        ),
        "timeseries": series,
        "first_output_ms": None if counts["first"] is None else int(counts["first"]),
        "steady_state": steady_state(
            measured_series["second"].to_numpy(),
            measured_series["latency_p50_ms"].to_numpy(),
            config.steady_tolerance,
        ),
        # a bootstrap over every record needs them in memory, which this engine avoids
        "confidence": None,
        "latencies": None,
        "write_latencies": lambda path: latencies.write.mode("overwrite").parquet(str(path)),
        "engine": "spark",
    }


_WANT = "_want_"
"""Prefix of an expected output's columns joined to its output (dropped from latencies.parquet)."""


def _explained(good, expected, identity: list[str], checked: list[str]):
    """``good`` with :data:`EXPLAINED` and, per ``checked`` field, the value of the
    expected output of the same identity (``_want_<field>``; null when unexpected)."""

    twin = expected.select(
        *identity,
        F.lit(True).alias(EXPLAINED),
        *[F.col(c).alias(_WANT + c) for c in checked],
    )
    return good.join(twin, identity, "left").select(
        *good.columns,
        F.coalesce(F.col(EXPLAINED), F.lit(False)).alias(EXPLAINED),
        *[_WANT + c for c in checked],
    )


def _derived(field: str):
    """The expected ``field`` of an explained output, its own otherwise (:func:`checks.derived`)."""

    return F.when(F.col(EXPLAINED), F.col(_WANT + field)).otherwise(F.col(field))


def _wrong(field: str, exact: bool):
    """Whether an explained output's ``field`` differs from the expected, as
    :func:`evaluator.checks.check` decides (never null)."""

    got, want = F.col(field), F.col(_WANT + field)
    if exact:
        return ~got.eqNullSafe(want)
    got, want = got.cast("double"), want.cast("double")
    missing_got = got.isNull() | F.isnan(got)
    missing_want = want.isNull() | F.isnan(want)
    # numpy's isclose: |a − b| <= atol + rtol·|b| (equal infinities are close)
    close = (got == want) | (F.abs(got - want) <= F.lit(checks.RTOL) + checks.RTOL * F.abs(want))
    return (missing_got != missing_want) | (~missing_got & ~missing_want & ~close)


def _examples(measured, flag, field: str, identity: list[str]) -> list[dict]:
    """The first :data:`checks.EXAMPLES` outputs where ``flag``, by partition and offset
    (the pandas reader's order within a partition)."""

    rows = (
        measured.filter(flag)
        .orderBy(PARTITION, OFFSET)
        .select(*identity, field, _WANT + field)
        .limit(checks.EXAMPLES)
        .collect()
    )
    return [
        {
            **{k: _plain(row[k]) for k in identity},
            "output": _plain(row[field]),
            "expected": _plain(row[_WANT + field]),
        }
        for row in rows
    ]


def _missing(lost, identity: list[str]) -> dict | None:
    """:func:`evaluator.completeness.missing_section` of the expected rows ``lost``, in
    the order :func:`evaluator.completeness.missing_outputs` gives them."""
    per_second = (
        lost.groupBy(F.floor(F.col(s.INPUT_TS_LATEST) / s.SECOND_MS).alias("second"))
        .count()
        .toPandas()
    )
    first = lost.orderBy(s.INPUT_TS_LATEST, *identity).limit(MISSING_EXAMPLES).collect()
    return missing_section(
        per_second.set_index("second")["count"],
        [{k: _plain(row[k]) for k in (*identity, s.INPUT_TS_LATEST)} for row in first],
    )


def _plain(value):
    """A JSON-friendly scalar (NaN as None, as :mod:`evaluator.checks` reports it)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _malformed_by_kind(raw) -> dict[str, int]:
    """Malformed inputs per kind of :data:`ground.malformed.KINDS`: the invalid ones'
    raw bytes classified by :func:`ground.malformed.classify`, as the pandas engine
    does (a second pass over the input topics, made only when some are malformed)."""

    kind = F.udf(lambda value: m.classify(value), "string")  # no type hints to infer from
    bad = _valid_inputs(raw, keep_value=True).filter(~F.col("_valid"))
    rows = bad.groupBy(kind(F.col("_value").cast("binary")).alias("kind")).count().collect()
    found = {row["kind"]: row["count"] for row in rows}
    return {k: found.get(k, 0) for k in m.KINDS}


def _valid_inputs(raw, keep_value: bool = False):
    """Inputs parsed, with ``_valid`` as :func:`evaluator.expected.valid_mask` defines it;
    ``keep_value``: and the value itself (its raw bytes: ``_value`` cast to binary)."""

    parsed = _parsed(raw, stages.INPUT_SCHEMA, recover=False)
    allowed = F.array(*[F.lit(n) for n in s.INPUT_FIELDS])
    keys = F.json_object_keys("_value")
    valid = keys.isNotNull() & (F.size(F.array_except(keys, allowed)) == 0)
    for name in s.INPUT_FIELDS:
        if name not in s.KINDS:
            valid &= F.col(name).isNotNull()
    valid &= F.col(s.SPEED).isNotNull() != F.col(s.FLOW).isNotNull()
    valid &= (F.octet_length("_value") <= m.MAX_INPUT_BYTES) & F.is_valid_utf8("_value")
    valid &= F.length(s.LOCATION_ID) > 0
    for name, (low, high) in m.RANGES.items():
        in_range = F.col(name).between(low, high)  # NaN sorts above every number
        valid &= in_range if name not in s.KINDS else F.coalesce(in_range, F.lit(True))
    parsed = parsed.withColumn("_valid", F.coalesce(valid, F.lit(False)))
    return parsed if keep_value else parsed.drop("_value")


def _expected(name: str, inputs, window_s: int, lookbacks_s: tuple[int, int]):
    """:func:`evaluator.expected.expected_outputs` in Spark: the same rows and columns."""

    if not stage(name).stateful:
        rows = inputs if stage(name).raw else inputs.filter(F.col("_valid"))
        values = [] if stage(name).raw else [F.col(k).cast("double").alias(k) for k in s.KINDS]
        return rows.select(
            F.col(TOPIC).alias(s.SOURCE_TOPIC),
            F.col(PARTITION).cast("bigint").alias(s.SOURCE_PARTITION),
            F.col(OFFSET).alias(s.SOURCE_OFFSET),
            F.col(TS).alias(s.INPUT_TS_LATEST),
            F.col(TS).alias(s.INPUT_TS_EARLIEST),
            F.lit(1).cast("bigint").alias(s.INPUT_COUNT),
            *values,
        )
    key = [s.LOCATION_ID, s.LANE, s.OBSERVATION_TS]
    valid = inputs.filter(F.col("_valid"))

    def side(kind: str, tag: str):
        # the first record of a key wins, as pandas' drop_duplicates(keep="first")

        rows = valid.filter(F.col(kind).isNotNull())
        first = Window.partitionBy(*key).orderBy(TOPIC, PARTITION, OFFSET)
        rows = rows.withColumn("_n", F.row_number().over(first)).filter(F.col("_n") == 1)
        return rows.select(
            *key,
            F.col(TS).alias(f"_ts_{tag}"),
            F.col(s.NUM_LANES).alias(f"_nl_{tag}"),
            F.col(kind).cast("double").alias(kind),
        )

    joined = (
        side(s.SPEED, "s")
        .join(side(s.FLOW, "f"), key, "inner")
        .select(
            *key,
            s.SPEED,
            s.FLOW,
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
            F.sum(s.FLOW).alias(s.FLOW_SUM),
            F.avg(s.SPEED).alias(s.SPEED_AVG),
        )
        .withColumn(s.WINDOW_START, F.col(s.WINDOW_START).cast("bigint"))
        .withColumn(s.WINDOW_END, F.col(s.WINDOW_START) + SECOND_MS)
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
    key = [s.LOCATION_ID, "_last"]
    values = (s.FLOW_SUM, s.SPEED_AVG)
    last = tumbling.select(
        s.LOCATION_ID,
        F.col(s.WINDOW_START).alias("_last"),
        s.LANES_SEEN,
        s.NUM_LANES,
        *values,
    )
    out = last.join(agg, key, "inner")
    changes = []
    for back_s, which in zip(lookbacks_s, (0, 1), strict=True):
        # the tumbling second back_s seconds before the window's last one
        then = tumbling.select(
            s.LOCATION_ID,
            (F.col(s.WINDOW_START) + back_s * SECOND_MS).alias("_last"),
            *[F.col(v).alias(f"_then{which}_{v}") for v in values],
        )
        out = out.join(then, key, "left")
        for value, names in CHANGES.items():
            before = F.col(f"_then{which}_{value}")
            # (now − then) / then; null (NaN in pandas) without that second or when it is 0
            change = F.when(before != 0, F.try_divide(F.col(value) - before, before))
            changes.append(change.alias(names[which]))
    return out.select(
        s.LOCATION_ID,
        (F.col("_last") + SECOND_MS - window_s * SECOND_MS).alias(s.WINDOW_START),
        (F.col("_last") + SECOND_MS).alias(s.WINDOW_END),
        s.INPUT_TS_LATEST,
        s.INPUT_TS_EARLIEST,
        s.INPUT_COUNT,
        s.LANES_SEEN,
        s.NUM_LANES,
        *values,
        *changes,
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
