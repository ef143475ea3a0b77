"""One run's evaluation as a Spark batch job: read, measure, check completeness.

The steps of :func:`evaluator.measure.measure`, over DataFrames: the outputs
read and the malformed ones counted, the inputs read and validated, the measured
period, each output's latency from the inputs it is explained by, one pass over
the outputs for every per-output count, then the records, the statistics and
the per-second series the report needs, as the same
:class:`evaluator.result.Measurement` the pandas engine returns.
"""

from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from evaluator import checks, latency, output_fields
from evaluator.completeness import empty_counts
from evaluator.config import EvaluatorConfig
from evaluator.latency import EXPLAINED, IN_RANGE, LATENCY, LATENCY_EARLIEST, Period
from evaluator.reader import MALFORMED, OFFSET, PARTITION, TIMESTAMP
from evaluator.result import Measurement, Records
from evaluator.run_info import RunInfo
from evaluator.spark import checks as spark_checks
from evaluator.spark.completeness import completeness
from evaluator.spark.expected import expected_outputs, malformed_by_kind
from evaluator.spark.reader import (
    NO_PARTIAL_RESULTS,
    VALID,
    VALUE,
    parse_values,
    read_topics,
    valid_inputs,
)
from evaluator.spark.stats import describe, per_second
from evaluator.steady import steady_state
from evaluator.throughput import peak_output, throughput
from ground import contract as s
from ground import malformed as m
from ground.errors import EvaluationError
from ground.jvm.spark import build_session
from ground.stages import stage


def evaluate_frames(bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> Measurement:
    """Everything the report needs, computed by Spark (a local session by default)."""

    conf = {"spark.sql.shuffle.partitions": "2", **NO_PARTIAL_RESULTS}
    spark = build_session("stagebench-evaluate", conf=conf)
    return measure_spark(spark, bootstrap, run, config)


@dataclass(frozen=True)
class _Inputs:
    """The input topics of a run, as read."""

    raw: DataFrame
    """The records as read (:func:`read_topics`)."""
    frame: DataFrame
    """The records parsed and validated (:data:`VALID`), or as read for a raw stage; cached."""
    first: int | None
    """The first record's broker timestamp (None: no records)."""
    last: int | None


def measure_spark(
    spark: SparkSession, bootstrap: str, run: RunInfo, config: EvaluatorConfig
) -> Measurement:
    """Everything the report needs, as :func:`evaluator.measure.measure` gives it."""

    for key, value in NO_PARTIAL_RESULTS.items():
        spark.conf.set(key, value)
    table = stage(run.stage)
    identity = list(table.identity)
    good, malformed_outputs, outputs_total = _outputs(spark, bootstrap, run)
    inputs = _inputs(spark, bootstrap, run) if run.input_topics else None
    period = _period(good, inputs, run, config)

    expected_all = None
    checked: list[str] = []
    if inputs is not None:
        lookbacks = (config.lookback_short_s, config.lookback_long_s)
        expected_all = expected_outputs(
            run.stage, inputs.frame, config.sliding_window_s, lookbacks
        ).cache()
        checked = [
            c
            for c in (*checks.CARRIED, *output_fields.VALUES.get(run.stage, ()))
            if c in good.columns and c in expected_all.columns
        ]
    good = _with_latencies(good, expected_all, identity, checked, period)
    measured_all = good.filter(F.col(IN_RANGE))
    measured = measured_all.filter(F.col(EXPLAINED))
    wrong_flags = {c: spark_checks.wrong(c, exact=c in checks.CARRIED) for c in checked}
    counts = _per_output(good, wrong_flags, run.stage, period)

    n_measured = counts["outputs"]
    records: dict[str, Any] = empty_counts(
        n_measured, n_measured - measured_all.select(*identity).distinct().count()
    )
    if run.stage == "tumbling":
        records["partial_window_outputs"] = counts["partial_window_outputs"]
    missing = wrong = None
    carried: dict[str, int | None] = dict.fromkeys((*checks.CARRIED_KEYS, "wrong_values"))
    read = {"malformed_inputs": None, "malformed_inputs_by_kind": None}
    read.update(inputs=0, inputs_measured=0)
    if inputs is not None:
        read = _input_counts(inputs, table.raw, period)
        expected_in = expected_all.filter(_within(s.INPUT_TS_LATEST, period))
        found, missing = completeness(expected_in, good, identity, table.window)
        records.update(expected=found["expected"], missing=found["missing"])
        records["unexpected"] = counts["unexpected"]
        if table.window:
            records["partial_windows"] = found["partial_windows"]
        carried, wrong = _checked(counts, wrong_flags, measured, identity)
    records.update(carried)
    records.update(
        {
            "negative": counts["negative"],
            "negative_earliest": counts["negative_earliest"],
            "malformed_inputs": read["malformed_inputs"],
            "malformed_inputs_by_kind": read["malformed_inputs_by_kind"],
            "malformed_outputs": malformed_outputs,
            "outside_window": counts["good"] - n_measured,
            "inputs": read["inputs"],
            "inputs_measured": read["inputs_measured"],
            "outputs_total": outputs_total,
        }
    )
    return _result(
        good, measured, inputs, counts, period, config, Records(**records), missing, wrong
    )


def _outputs(spark: SparkSession, bootstrap: str, run: RunInfo) -> tuple[DataFrame, int, int]:
    """The well-formed outputs, parsed; the number of malformed ones (as
    :func:`evaluator.output_fields.required_fields` defines them) and of all."""
    out_raw = read_topics(spark, bootstrap, (run.output_topic,))
    outputs = parse_values(out_raw, output_fields.output_schema(run.stage), stage(run.stage).raw)
    good_cond = F.lit(True)
    for name in output_fields.required_fields(run.stage):
        good_cond &= F.col(name).isNotNull()
    outputs = outputs.withColumn(MALFORMED, ~good_cond).cache()
    malformed = outputs.filter(F.col(MALFORMED)).count()
    total = out_raw.count()
    return outputs.filter(~F.col(MALFORMED)).drop(MALFORMED, VALUE), malformed, total


def _inputs(spark: SparkSession, bootstrap: str, run: RunInfo) -> _Inputs:
    raw = read_topics(spark, bootstrap, run.input_topics)
    frame = (raw if stage(run.stage).raw else valid_inputs(raw)).cache()
    first, last = frame.agg(F.min(TIMESTAMP), F.max(TIMESTAMP)).first()
    return _Inputs(raw, frame, first, last)


def _period(
    good: DataFrame, inputs: _Inputs | None, run: RunInfo, config: EvaluatorConfig
) -> Period:
    """The measured period, from the inputs' broker timestamps, or from the carried
    ones when no input was read."""
    if inputs is not None and inputs.first is not None:
        bounds = (inputs.first, inputs.last)
    else:
        bounds = good.agg(F.min(s.INPUT_TS_LATEST), F.max(s.INPUT_TS_LATEST)).first()
    if bounds[0] is None:
        raise EvaluationError(
            f"nothing to evaluate: output topic {run.output_topic!r} has no valid records "
            "and no input records were read"
        )
    return latency.measured_period(int(bounds[0]), int(bounds[1]), config, run.start_ms, run.end_ms)


def _within(col: Column | str, period: Period) -> Column:
    col = F.col(col) if isinstance(col, str) else col
    return (col >= period.lo) & (col <= period.hi)


def _with_latencies(
    good: DataFrame,
    expected: DataFrame | None,
    identity: list[str],
    checked: list[str],
    period: Period,
) -> DataFrame:
    """The outputs with :data:`EXPLAINED`, their latencies and :data:`IN_RANGE`; cached.

    With the expected outputs, the latency is from the inputs' own timestamps,
    matched by identity; an output no input explains keeps its carried time only to
    be counted (unexpected).
    """
    if expected is not None:
        good = spark_checks.explained(good, expected, identity, checked)
        latest = spark_checks.derived(s.INPUT_TS_LATEST)
        earliest = spark_checks.derived(s.INPUT_TS_EARLIEST)
    else:
        good = good.withColumn(EXPLAINED, F.lit(True))
        latest, earliest = F.col(s.INPUT_TS_LATEST), F.col(s.INPUT_TS_EARLIEST)
    return good.withColumns(
        {
            LATENCY: F.col(TIMESTAMP) - latest,
            LATENCY_EARLIEST: F.col(TIMESTAMP) - earliest,
            IN_RANGE: _within(latest, period),
        }
    ).cache()


def _per_output(
    good: DataFrame, wrong_flags: dict[str, Column], stage_name: str, period: Period
) -> Row:
    """Every per-output count, in one pass over the outputs."""
    is_measured = F.col(IN_RANGE) & F.col(EXPLAINED)
    any_value_wrong = F.lit(False)
    for field, flag in wrong_flags.items():
        if field not in checks.CARRIED:
            any_value_wrong |= flag
    partial_output = (
        F.col(s.LANES_SEEN) < F.col(s.NUM_LANES) if stage_name == "tumbling" else F.lit(False)
    )
    per_output = {
        "good": F.lit(True),
        "outputs": F.col(IN_RANGE),
        "unexpected": F.col(IN_RANGE) & ~F.col(EXPLAINED),
        "partial_window_outputs": F.col(IN_RANGE) & partial_output,
        "negative": is_measured & (F.col(LATENCY) < 0),
        "negative_earliest": is_measured & (F.col(LATENCY_EARLIEST) < 0),
        "wrong_values": is_measured & any_value_wrong,
        "out_in_period": _within(TIMESTAMP, period),
        **{f"_wrong_{c}": is_measured & flag for c, flag in wrong_flags.items()},
    }
    return good.agg(
        F.min(TIMESTAMP).alias("first"),
        F.max(TIMESTAMP).alias("last"),
        *[F.count(F.when(cond, 1)).alias(k) for k, cond in per_output.items()],
    ).first()


def _input_counts(inputs: _Inputs, raw: bool, period: Period) -> dict[str, Any]:
    """The inputs read, measured and malformed (by kind), as the records name them."""
    malformed = [] if raw else [F.count(F.when(~F.col(VALID), 1)).alias("bad")]
    row = inputs.frame.agg(
        F.count(F.lit(1)).alias("total"),
        F.count(F.when(_within(TIMESTAMP, period), 1)).alias("measured"),
        *malformed,
    ).first()
    bad = by_kind = None
    if malformed:
        bad = row["bad"]
        by_kind = malformed_by_kind(inputs.raw) if bad else dict.fromkeys(m.KINDS, 0)
    return {
        "malformed_inputs": bad,
        "malformed_inputs_by_kind": by_kind,
        "inputs": row["total"],
        "inputs_measured": row["measured"],
    }


def _checked(
    counts: Row, wrong_flags: dict[str, Column], measured: DataFrame, identity: list[str]
) -> tuple[dict[str, int | None], dict[str, dict]]:
    """The carried fields' wrong counts (keys of :data:`evaluator.checks.CARRIED_KEYS` and
    ``wrong_values``), and per wrong field its count and first examples."""
    wrong_counts = {c: counts[f"_wrong_{c}"] for c in wrong_flags}
    carried: dict[str, int | None] = {
        key: wrong_counts.get(field, 0)
        for key, field in zip(checks.CARRIED_KEYS, checks.CARRIED, strict=True)
    }
    carried["wrong_values"] = counts["wrong_values"]
    wrong = {
        c: {"count": n, "examples": spark_checks.examples(measured, wrong_flags[c], c, identity)}
        for c, n in wrong_counts.items()
        if n
    }
    return carried, wrong


def _result(
    good: DataFrame,
    measured: DataFrame,
    inputs: _Inputs | None,
    counts: Row,
    period: Period,
    config: EvaluatorConfig,
    records: Records,
    missing: dict | None,
    wrong: dict | None,
) -> Measurement:
    """What :func:`measure_spark` returns: the pandas engine's result, but latencies
    that Spark writes itself (``write_latencies``)."""
    latencies = good.select(
        F.col(PARTITION).alias("partition"),
        F.col(OFFSET).alias("offset"),
        F.col(TIMESTAMP).alias("timestamp"),
        *[
            c
            for c in good.columns
            if not c.startswith("_") and c not in (PARTITION, OFFSET, TIMESTAMP)
        ],
    )
    in_ts = inputs.frame.select(TIMESTAMP) if inputs is not None else None
    series = per_second(good.filter(F.col(EXPLAINED)), in_ts)
    measured_series = per_second(measured, None)
    first_output_delay = drain = None
    if inputs is not None and inputs.first is not None and counts["first"] is not None:
        first_output_delay = int(counts["first"]) - int(inputs.first)
        drain = int(counts["last"]) - int(inputs.last)
    return Measurement(
        period=period,
        latency_ms=describe(measured, LATENCY),
        latency_earliest_ms=describe(measured, LATENCY_EARLIEST),
        records=records,
        missing=missing,
        wrong=wrong,
        throughput=throughput(
            records.inputs_measured,
            int(counts["out_in_period"]),
            period,
            peak_output(series),
            first_output_delay,
            drain,
        ),
        timeseries=series,
        first_output_ms=None if counts["first"] is None else int(counts["first"]),
        steady_state=steady_state(
            measured_series["second"].to_numpy(),
            measured_series["latency_p50_ms"].to_numpy(),
            config.steady_tolerance,
        ),
        # a bootstrap over every record needs them in memory, which this engine avoids
        confidence=None,
        latencies=None,
        write_latencies=lambda path: latencies.write.mode("overwrite").parquet(str(path)),
        engine="spark",
    )
