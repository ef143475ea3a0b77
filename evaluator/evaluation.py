"""One run's evaluation with pandas: read, measure, check completeness, report.

The flow: refuse topics that break the clock rule (CreateTime, several leaders,
leaders that changed during the run; docs/method.md#clock), read the output topic (refusing
anything not stamped with LogAppendTime) and the input topics, fix the measured
period from the inputs' broker timestamps, compute per-output latencies, the
expected outputs and completeness, then the statistics and time series, and
write everything into the run directory (:mod:`evaluator.report`).
"""

import logging
import platform
import time
from pathlib import Path
from typing import Any

import confluent_kafka
import numpy as np
import pandas as pd
import pyarrow

from evaluator import checks, reader, recovery, report, stages, stats
from evaluator import expected as exp
from evaluator.catchup import catch_up
from evaluator.completeness import completeness, missing_outputs
from evaluator.confidence import percentile_intervals
from evaluator.config import EvaluatorConfig
from evaluator.latency import (
    EXPLAINED,
    IN_RANGE,
    LATENCY,
    LATENCY_EARLIEST,
    Period,
    measured_period,
    with_latencies,
)
from evaluator.reader import KIND, MALFORMED, TIMESTAMP, TIMESTAMP_TYPE, check_log_append_time
from evaluator.run_info import RunInfo
from evaluator.steady import steady_state
from evaluator.summary_file import SCHEMA_VERSION
from evaluator.throughput import peak_output, throughput
from ground import contract as s
from ground.config import as_dict
from ground.contract import SECOND_MS
from ground.errors import EvaluationError
from ground.kafka.topics import check_topics
from ground.stages import stage

log = logging.getLogger(__name__)


def evaluate(
    bootstrap: str,
    run: RunInfo,
    config: EvaluatorConfig,
    out_dir: Path,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Evaluate ``run`` from the broker at ``bootstrap``; write the report into ``out_dir``.

    Returns the summary (also written as summary.json). ``config.engine`` "spark"
    runs the same evaluation as a Spark batch job.
    """
    out_dir = Path(out_dir)
    report.check_writable(out_dir, overwrite)
    check_clock(bootstrap, run)
    started = time.monotonic()
    if config.engine == "spark":
        # pyspark loads only for the engine that needs it, not for every pandas evaluation
        from evaluator.spark.evaluation import evaluate_frames

        result = evaluate_frames(bootstrap, run, config)
    else:
        result = evaluate_pandas(bootstrap, run, config)
    summary = build_summary(run, config, bootstrap, result)
    summary["evaluation"]["seconds"] = round(time.monotonic() - started, 3)
    report.write(out_dir, summary, result, config)
    return summary


def check_clock(bootstrap: str, run: RunInfo) -> None:
    """Refuse to measure when the run's timestamps may come from two clocks (docs/method.md#clock).

    TopicError when a topic is CreateTime or its partitions have different
    leaders now; EvaluationError when the run recorded different leaders before
    and after it (``run.metadata["leaders"]``).
    """

    leaders = run.metadata.get("leaders") or {}
    if "before" in leaders and "after" in leaders and leaders["before"] != leaders["after"]:
        raise EvaluationError(
            f"partition leaders changed during the run (before: {leaders['before']}, "
            f"after: {leaders['after']}); timestamps may come from two broker clocks, "
            "refusing to measure"
        )
    check_topics(bootstrap, [run.output_topic, *run.input_topics])


def read_from_ms(run: RunInfo, config: EvaluatorConfig) -> int | None:
    """Where reading the topics starts, broker time; None: at their beginning.

    ``config.read_before_s`` before the run's marked start, when the stage writes one
    output per input (an output's inputs are then read whenever the output is: it is
    stamped after them) and the run has no disturbance (whose recovery baseline may
    reach further back). A join or window needs inputs from before its outputs, so
    those read whole topics. A parse capacity probe at 48,000 msg/s spent 2.5 of its
    5.1 minutes evaluating its whole topics; read from 10 s before its measured period,
    one at 50,400 msg/s took 75 s.
    """
    if (
        config.read_before_s is None
        or run.start_ms is None
        or run.disturbances
        or stage(run.stage).stateful
    ):
        return None
    return run.start_ms - round(config.read_before_s * 1000)


def read_outputs(
    bootstrap: str, run: RunInfo, config: EvaluatorConfig, from_ms: int | None = None
) -> pd.DataFrame:
    """The output topic (from ``from_ms``), refusing records not stamped by the broker
    (docs/method.md#clock)."""
    parser = reader.lenient_line_parser if stage(run.stage).raw else reader.strict_line_parser
    frame = reader.read_topic(
        bootstrap,
        run.output_topic,
        stages.output_schema(run.stage),
        parser,
        config.batch_size,
        config.idle_timeout_s,
        from_ms=from_ms,
    )
    check_log_append_time(run.output_topic, frame[TIMESTAMP_TYPE].to_numpy())
    return frame


def read_inputs(
    bootstrap: str, run: RunInfo, config: EvaluatorConfig, from_ms: int | None = None
) -> pd.DataFrame | None:
    """All input topics (from ``from_ms``) in one frame (None when the run names none)."""
    if not run.input_topics:
        return None
    parse = not stage(run.stage).raw
    frames = []
    for topic in run.input_topics:
        frame = reader.read_topic(
            bootstrap,
            topic,
            stages.INPUT_SCHEMA if parse else None,
            exp.input_line_parser,
            config.batch_size,
            config.idle_timeout_s,
            unexpected_fields="error",
            required_only=exp.CHECKED_ONLY if parse else (),
            classify=exp.input_kinds if parse else None,
            from_ms=from_ms,
        )
        check_log_append_time(topic, frame[TIMESTAMP_TYPE].to_numpy())
        frames.append(frame)
    cats = (reader.TOPIC, s.LOCATION_ID)
    return pd.concat(exp.unify_categories(frames, cats), ignore_index=True)


def evaluate_pandas(bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> dict[str, Any]:
    """Everything the report needs, computed in pandas from the topics."""
    from_ms = read_from_ms(run, config)
    outputs = read_outputs(bootstrap, run, config, from_ms)
    inputs = read_inputs(bootstrap, run, config, from_ms)
    return measure(run, config, outputs, inputs, from_ms)


def measure(
    run: RunInfo,
    config: EvaluatorConfig,
    outputs: pd.DataFrame,
    inputs: pd.DataFrame | None,
    from_ms: int | None = None,
) -> dict[str, Any]:
    """The evaluation proper, on read topics (pure: unit-testable without Kafka).

    ``outputs``/``inputs`` as :func:`evaluator.reader.read_topic` returns them;
    ``from_ms``: the topics were read from this broker time on (:func:`read_from_ms`),
    so an output whose carried input time is earlier is left out, its input unread.
    """
    unread = 0
    if from_ms is not None:
        early = (outputs[s.INPUT_TS_LATEST] < from_ms).fillna(False).to_numpy(bool)
        unread = int(early.sum())
        outputs = _subset(outputs, ~early)
    # malformed outputs as evaluator.stages.required_fields defines them
    bad = (
        outputs[MALFORMED].to_numpy(bool) if MALFORMED in outputs else np.zeros(len(outputs), bool)
    )
    for col in stages.required_fields(run.stage):
        bad |= outputs[col].isna().to_numpy()
    good = _subset(outputs, ~bad)
    if any(good[c].dtype != np.int64 for c in stages.TIMES):
        good = good.astype({c: np.int64 for c in stages.TIMES})

    identity = stage(run.stage).identity
    expected_all = expected_in = None
    malformed_inputs = malformed_by_kind = None
    if inputs is not None and len(inputs):
        in_ts = inputs[TIMESTAMP].to_numpy(np.int64)
        start, end = int(in_ts.min()), int(in_ts.max())
    elif len(good):
        in_ts = np.zeros(0, np.int64)
        latest = good[s.INPUT_TS_LATEST].to_numpy()
        start, end = int(latest.min()), int(latest.max())
    else:
        raise EvaluationError(
            f"nothing to evaluate: output topic {run.output_topic!r} has no valid records "
            "and no input records were read"
        )
    period = measured_period(start, end, config, run.start_ms, run.end_ms)
    if inputs is not None:
        lookbacks = (config.lookback_short_s, config.lookback_long_s)
        expected_all = exp.expected_outputs(run.stage, inputs, config.sliding_window_s, lookbacks)
        expected_in = _subset(
            expected_all, period.contains(expected_all[s.INPUT_TS_LATEST].to_numpy())
        )
        if not stage(run.stage).raw:
            malformed_inputs = int((~exp.valid_mask(inputs)).sum()) if len(inputs) else 0
        if KIND in inputs:
            malformed_by_kind = exp.malformed_by_kind(inputs)
        # latency from the inputs' own timestamps, matched by identity; an output no
        # input explains keeps its carried time only to be counted (unexpected)
        rows = checks.lookup(good, expected_all, identity)
        good = with_latencies(
            good,
            period,
            checks.derived(good, expected_all, rows, s.INPUT_TS_LATEST),
            checks.derived(good, expected_all, rows, s.INPUT_TS_EARLIEST),
        )
        good[EXPLAINED] = rows >= 0
    else:
        rows = None
        good = with_latencies(good, period)
        good[EXPLAINED] = True
    in_range = good[IN_RANGE].to_numpy()
    measured_all = _subset(good, in_range)
    counts = completeness(run.stage, identity, measured_all, expected_in, good, expected_all)
    missing = missing_outputs(expected_in, good, identity) if counts["missing"] else None
    carried: dict[str, int | None] = dict.fromkeys((*checks.CARRIED_KEYS, "wrong_values"))
    wrong: dict[str, dict] | None = None
    if rows is not None:
        carried, wrong = checks.check(
            run.stage, measured_all, expected_all, rows[in_range], identity
        )
    explained = _subset(good, good[EXPLAINED].to_numpy())
    measured = _subset(measured_all, measured_all[EXPLAINED].to_numpy())

    latency = measured[LATENCY].to_numpy()
    latency_earliest = measured[LATENCY_EARLIEST].to_numpy()
    in_measured = in_ts[period.contains(in_ts)]
    out_ts = good[TIMESTAMP].to_numpy()
    series = stats.timeseries(explained[TIMESTAMP].to_numpy(), explained[LATENCY].to_numpy(), in_ts)
    measured_ts = measured[TIMESTAMP].to_numpy(np.int64)
    measured_series = stats.timeseries(measured_ts, latency, in_measured)
    first_output_delay = drain = None
    if len(out_ts) and len(in_ts):
        # the first input is known only when the topics were read from their beginning
        first_output_delay = None if from_ms is not None else int(out_ts.min()) - int(in_ts.min())
        drain = int(out_ts.max()) - int(in_ts.max())
    records = {
        **counts,
        **carried,
        "negative": int((latency < 0).sum()),
        "negative_earliest": int((latency_earliest < 0).sum()),
        "malformed_inputs": malformed_inputs,
        "malformed_inputs_by_kind": malformed_by_kind,
        "malformed_outputs": int(bad.sum()),
        "outside_window": int(len(good) - len(measured_all)),
        "inputs": len(in_ts),
        "inputs_measured": len(in_measured),
        "outputs_total": len(outputs),
    }
    return {
        "period": period,
        "latency_ms": stats.describe(latency),
        "latency_earliest_ms": stats.describe(latency_earliest),
        "records": records,
        "missing": missing,
        "wrong": wrong,
        "throughput": throughput(
            len(in_measured),
            int(period.contains(out_ts).sum()),
            period,
            peak_output(series),
            first_output_delay,
            drain,
        ),
        "timeseries": series,
        "first_output_ms": int(out_ts.min()) if len(out_ts) else None,
        "steady_state": steady_state(
            measured_series["second"].to_numpy(),
            measured_series["latency_p50_ms"].to_numpy(),
            config.steady_tolerance,
        ),
        "confidence": percentile_intervals(measured_ts // SECOND_MS, latency),
        "latencies": good,
        "engine": "pandas",
        "read": {"from_ms": from_ms, "outputs_of_unread_inputs": unread},
    }


def _backlog(run: RunInfo, result: dict[str, Any]) -> dict[str, Any]:
    """A job started behind a backlog (the run's ``job_started_ms`` mark, broker clock):
    its time to first output from its start and when it caught up; {} for other runs."""
    started = run.metadata.get("marks_ms", {}).get("job_started_ms")
    if started is None:
        return {}
    first = result["first_output_ms"]
    return {
        "job_started_ms": started,
        "time_to_first_output_ms": None if first is None else first - started,
        "catch_up": catch_up(result["timeseries"], started),
    }


def _subset(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """Rows of ``frame`` where ``mask``; the frame itself (no copy) when that is all of them."""
    if mask.all():
        return frame
    return frame.loc[mask].reset_index(drop=True)


def build_summary(
    run: RunInfo, config: EvaluatorConfig, bootstrap: str, result: dict[str, Any]
) -> dict[str, Any]:
    """The summary.json document, schema version :data:`SCHEMA_VERSION`.

    Keys: ``schema_version``; ``run`` (id, stage, impl, workload, rate,
    duration_s, bootstrap, input_topics, output_topic, start_ms, end_ms);
    ``versions`` (the run's, plus the evaluator's libraries); ``config`` (the
    run's configuration verbatim plus ``evaluator``); ``metadata`` (verbatim);
    ``period`` (start_ms, end_ms, measured_from_ms, measured_to_ms, warmup_ms,
    end_cut_ms); ``latency_ms`` and ``latency_earliest_ms`` (count, mean, min,
    p1, p5, p25, p50, p75, p95, p99, p99_9, p99_99, max; see
    :mod:`evaluator.stats`; from the inputs' timestamps, over the outputs an
    input explains); ``records`` (outputs, expected, missing, duplicates,
    unexpected, partial_windows, partial_window_outputs, input_ts_mismatch,
    input_ts_earliest_mismatch, input_count_mismatch, wrong_values, negative,
    negative_earliest, malformed_inputs, malformed_inputs_by_kind, malformed_outputs,
    outside_window, inputs, inputs_measured, outputs_total; None where not
    applicable, see :mod:`evaluator.completeness` and :mod:`evaluator.checks`;
    malformed inputs as :mod:`ground.malformed` defines them, over the whole run,
    by kind with the pandas engine; malformed outputs as
    :func:`evaluator.stages.required_fields` defines them); ``wrong`` (per
    carried field or value that disagrees with the inputs: count and
    examples; None when no input was read); ``trusted`` (False when the
    pipeline's outputs contradict its inputs: wrong carried timestamps or
    counts, wrong values, unexplained outputs, negative latencies; the
    reasons are in ``warnings``; None when no input was read, so nothing was
    checked); ``throughput``:

    - ``input_mps``, ``output_mps``: input records and valid output records whose
      *own* broker timestamp lies in the measured period, per second of that
      period (None when the period is empty), docs/method.md#reports;
    - ``seconds``: the length of the measured period;
    - ``peak_output_mps``: the largest number of valid outputs appended in one
      broker second over the whole run (the time series' ``output_count``),
      None without outputs;
    - ``first_output_delay_ms``: the first valid output's broker timestamp minus
      the first input's (in the single burst it includes the backlog's length,
      docs/method.md#workloads), None without inputs or outputs or when the topics
      were read from a later time;
    - a job started behind a backlog (single burst) adds ``job_started_ms`` (the
      broker-clock mark of its query's start), ``time_to_first_output_ms`` from
      it, and ``catch_up`` (:func:`evaluator.catchup.catch_up`);
    - ``drain_ms``: the last valid output's broker timestamp minus the last
      input's: how long the job still wrote after the input stopped (a
      capacity probe must drain within 10 s), None without inputs or outputs.

    ``recovery``: after each disturbance window of the run that starts in the
    measured period (the periodic burst's bursts, a fault's outage), the baseline,
    peak and recovery (:func:`evaluator.recovery.section`); None without windows.

    ``evaluation`` (engine, percentile_method, seconds, from_ms: the topics were read
    from this broker time, None from their beginning, and then outputs_of_unread_inputs:
    outputs left out because their inputs came earlier, see :func:`read_from_ms`);
    ``warnings`` (list of sentences: the run's own ``metadata["warnings"]`` —
    publisher behind schedule, delivery errors, drain timeout — then the evaluator's).
    """
    period: Period = result["period"]
    run_section = run.as_summary()
    run_section["bootstrap"] = run.bootstrap or bootstrap
    distrust = _distrust(result["records"])
    own = distrust + _warnings(result["records"], config, period, run.start_ms is not None)
    own += _missing_warning(result["missing"])
    own += _steady_warnings(result["steady_state"])
    after = recovery.section(
        result["timeseries"],
        run.disturbances,
        period.lo,
        period.hi,
        config.recovery_baseline_s,
        config.recovery_threshold,
    )
    own += recovery.warnings(after)
    for text in own:
        log.warning("%s", text)
    warnings = [*(str(w) for w in run.metadata.get("warnings", [])), *own]
    return {
        "schema_version": SCHEMA_VERSION,
        "run": run_section,
        "versions": {**run.metadata.get("versions", {}), **_versions()},
        "config": {**run.config, "evaluator": as_dict(config)},
        "metadata": run.metadata,
        "period": {
            "start_ms": period.start,
            "end_ms": period.end,
            "measured_from_ms": period.lo,
            "measured_to_ms": period.hi,
            "warmup_ms": period.lo - period.start,
            "end_cut_ms": period.end - period.hi,
        },
        "latency_ms": result["latency_ms"],
        "latency_earliest_ms": result["latency_earliest_ms"],
        "records": result["records"],
        "missing": result["missing"],
        "wrong": result["wrong"],
        # nothing checked without the inputs: neither trusted nor not
        "trusted": None if result["wrong"] is None else not distrust,
        "throughput": {**result["throughput"], **_backlog(run, result)},
        "steady_state": result["steady_state"],
        "confidence": result["confidence"],
        "recovery": after,
        "warmup": run.metadata.get("warmup"),
        "machine": run.metadata.get("machine"),
        "evaluation": {
            "engine": result["engine"],
            "percentile_method": f"numpy.percentile method={stats.METHOD!r} on all values",
            **result.get("read", {"from_ms": None}),
        },
        "warnings": warnings,
    }


def _steady_warnings(steady: dict | None) -> list[str]:
    """Why the measured period's latency may not be the pipeline's steady latency."""
    if steady is None:
        return ["too few measured seconds to tell whether the latency was steady"]
    slope = (
        f"per-second p50 {steady['verdict']} by {steady['slope_ms_per_min']:+.0f} ms/min "
        f"(95 % interval {steady['ci95'][0]:+.0f} to {steady['ci95'][1]:+.0f})"
    )
    if steady["verdict"] == "rising":
        return [
            f"not steady: {slope}: the offered rate is above what this stage sustains "
            "(overloaded), or the machine is"
        ]
    if steady["verdict"] == "falling":
        return [f"not steady: {slope}: still warming up; measure longer or warm up longer"]
    if steady["verdict"] == "undetermined":
        lo, hi = steady["change_ms"]
        change = (
            f"the per-second p50 changed by {lo:+,.0f} to {hi:+,.0f} ms over the measured "
            f"period (95 % interval), not all within ±{steady['allowed_ms']:,.0f} ms "
            f"(steady_tolerance {steady['tolerance'] * 100:g} % of its median)"
        )
        if hi < 0:
            return [f"steadiness not shown: {change}: it fell, still warming up; warm up longer"]
        if lo > 0:
            return [f"steadiness not shown: {change}: it rose, perhaps overloaded"]
        return [
            f"steadiness not shown: {change}: too short or too noisy a period to tell a "
            "drift of that size; measure longer"
        ]
    return []


_DEFECTS = {
    "input_ts_mismatch": "carry an input_ts_latest that is not their latest input's broker "
    "timestamp (the pipeline carries a wrong clock; latencies here come from the input topics)",
    "input_ts_earliest_mismatch": "carry an input_ts_earliest that is not their earliest "
    "input's broker timestamp",
    "input_count_mismatch": "carry an input_count that is not the number of their inputs",
    "wrong_values": "have values that differ from those computed from their inputs "
    "(see wrong in summary.json)",
    "unexpected": "are explained by no input (they have no latency)",
}


def _distrust(records: dict) -> list[str]:
    """Why this run's outputs contradict its inputs (empty: they do not)."""
    out = [
        f"{records[key]} outputs {what}: a pipeline defect, do not trust this run"
        for key, what in _DEFECTS.items()
        if records.get(key)
    ]
    if records["negative"]:
        out.append(
            f"{records['negative']} negative latencies: outputs appended before their inputs, "
            "timestamps from different clocks; do not trust these numbers"
        )
    return out


def _missing_warning(missing: dict | None) -> list[str]:
    """How many outputs are missing and where their inputs are (see missing in summary.json)."""
    if not missing:
        return []
    first, last = missing["spans"][0][0], missing["spans"][-1][1]
    spans = missing["spans_total"]
    where = ", ".join(f"{k}={v}" for k, v in missing["examples"][0].items())
    return [
        f"{missing['count']} missing outputs, from inputs appended in {spans} stretch(es) of "
        f"broker seconds between {first} and {last} (epoch s); the first: {where}"
    ]


def _warnings(
    records: dict, config: EvaluatorConfig, period: Period, run_marked_start: bool
) -> list[str]:
    out = []
    if records["outputs"] == 0:
        out.append("no outputs in the measured period")
    if config.warmup_s == 0 and not run_marked_start:
        out.append("warm-up not trimmed (warmup_s = 0): start-up latencies are included")
    for key in ("duplicates", "malformed_outputs"):
        if records.get(key):
            out.append(f"{records[key]} {key.replace('_', ' ')} outputs")
    if period.hi < period.lo:
        out.append("the measured period is empty (warm-up and end cut cover the whole run)")
    return out


def _versions() -> dict[str, str]:

    return {
        "python": platform.python_version(),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "confluent_kafka": confluent_kafka.version()[0],
        "librdkafka": confluent_kafka.libversion()[0],
    }
