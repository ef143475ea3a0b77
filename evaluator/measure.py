"""The pandas engine's measurement, on topics already read (pure: unit-testable without
Kafka).

From the outputs and inputs :mod:`evaluator.run_topics` read: the malformed outputs
set aside, the measured period fixed from the inputs' broker timestamps, each output's
latency from the inputs that explain it (:mod:`evaluator.outputs.checks`), the expected outputs
and completeness, then the statistics and the per-second series, as one
:class:`Measurement`.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.latencies import intended
from evaluator.latencies.closing import CLOCKS, split
from evaluator.latencies.latency import (
    EXPLAINED,
    IN_RANGE,
    LATENCY,
    LATENCY_EARLIEST,
    Period,
    measured_period,
    with_latencies,
)
from evaluator.latencies.lateness import input_lateness
from evaluator.latencies.updates import Updates, split_updates
from evaluator.model.record import Section, Stats
from evaluator.model.result import Records, Throughput
from evaluator.model.run_info import RunInfo
from evaluator.model.throughput import peak_output, throughput
from evaluator.outputs import checks, own_job
from evaluator.outputs import expected as exp
from evaluator.outputs.completeness import completeness, missing_outputs
from evaluator.statistics import stats
from evaluator.statistics.confidence import percentile_intervals
from evaluator.statistics.steady import steady_state
from evaluator.topics import output_fields
from evaluator.topics.reader import KIND, MALFORMED, TIMESTAMP
from ground import contract as s
from ground.contract import SECOND_MS
from ground.errors import EvaluationError
from ground.stages import stage


@dataclass(frozen=True, eq=False)
class Measurement:
    """What the evaluator measured in a run's topics: the summary's numbers and the frames
    its files are drawn from."""

    period: Period
    latency_ms: Stats
    latency_earliest_ms: Stats
    records: Records
    missing: Section | None
    wrong: dict[str, Section] | None
    throughput: Throughput
    timeseries: pd.DataFrame
    """Per broker second: inputs, outputs, p50 and p99 latency
    (:func:`evaluator.statistics.stats.timeseries`)."""
    first_output_ms: int | None
    steady_state: Section | None
    confidence: Section | None
    latencies: pd.DataFrame
    """One row per valid output."""
    from_ms: int | None = None
    outputs_of_unread_inputs: int | None = None
    input_lateness: Section | None = None
    """How late the inputs came in event time (:func:`evaluator.latencies.lateness.input_lateness`;
    None: a stage without a watermark)."""
    updates: Section | None = None
    """A stage written in update mode: its windows' updates
    (:meth:`evaluator.latencies.updates.Updates.section`); None for the others."""
    window_closing: Section | None = None
    """A built-in window's latency split at its closing input
    (:func:`evaluator.latencies.closing.split`); None for the other stages."""
    intended: Section | None = None
    """The latency from the inputs' intended send time
    (:func:`evaluator.latencies.intended.section`); None when no input was read."""
    by_input: pd.DataFrame | None = None
    """Per broker second of the outputs' latest inputs: the outputs' p50 and p99, for the
    recovery from a fault of a part of the job (:mod:`evaluator.recovery.section`); None
    without one."""

    def frames(self) -> dict[str, Any]:
        """What :func:`evaluator.files.report.write` draws the run's files from."""
        return {"timeseries": self.timeseries, "latencies": self.latencies}


@dataclass(frozen=True, eq=False)
class _Explained:
    """The valid outputs with their latencies, and what the inputs say about them."""

    good: pd.DataFrame
    """The valid outputs with :data:`EXPLAINED`, their latencies and :data:`IN_RANGE`."""
    rows: np.ndarray | None
    """Each output's row of ``expected_all``, -1 when no input explains it (None: no inputs)."""
    expected_all: pd.DataFrame | None
    expected_in: pd.DataFrame | None
    """The expected outputs whose latest input lies in the measured period."""
    malformed_inputs: int | None
    malformed_by_kind: dict | None
    updates: Updates | None = None
    """A stage written in update mode: what its windows' updates say
    (:mod:`evaluator.latencies.updates`); ``good`` holds each window's complete update."""


def measure(
    run: RunInfo,
    config: EvaluatorConfig,
    outputs: pd.DataFrame,
    inputs: pd.DataFrame | None,
    from_ms: int | None = None,
) -> Measurement:
    """The evaluation proper, on read topics.

    ``outputs``/``inputs`` as :func:`evaluator.topics.reader.read_topic` returns them;
    ``from_ms``: the topics were read from this broker time on
    (:func:`evaluator.run_topics.read_from_ms`), so an output whose carried input time
    is earlier is left out, its input unread.
    """
    own = stage(run.stage).own
    outputs, expected_all, unread = _prepared(run, config, outputs, inputs, from_ms)
    good, bad = _well_formed(run.stage, outputs)
    in_ts, period = _period(run, config, good, inputs)
    found = _explain(run, config, good, inputs, period, expected_all)
    good = found.good
    identity = stage(run.stage).identity
    in_range = good[IN_RANGE].to_numpy()
    measured_all = _subset(good, in_range)
    counts = completeness(
        run.stage, identity, measured_all, found.expected_in, good, found.expected_all
    )
    missing = missing_outputs(found.expected_in, good, identity) if counts["missing"] else None
    unreferenced = None
    if own:  # which outputs must exist is the job's to know: inputs none names, counted
        unreferenced, missing = counts["missing"], None
        counts["expected"] = counts["missing"] = None
    carried = checks.Carried(input_ts_mismatch=None, input_ts_earliest_mismatch=None,
                             input_count_mismatch=None, wrong_values=None)  # fmt: skip
    wrong: dict[str, dict] | None = None
    if found.rows is not None:
        carried, wrong = checks.check(
            run.stage, measured_all, found.expected_all, found.rows[in_range], identity
        )
    measured = _subset(measured_all, measured_all[EXPLAINED].to_numpy())
    latency = measured[LATENCY].to_numpy()
    latency_earliest = measured[LATENCY_EARLIEST].to_numpy()
    in_measured = in_ts[period.contains(in_ts)]
    records = Records(
        **counts,
        **carried,
        negative=int((latency < 0).sum()),
        negative_earliest=int((latency_earliest < 0).sum()),
        malformed_inputs=found.malformed_inputs,
        malformed_inputs_by_kind=found.malformed_by_kind,
        malformed_outputs=int(bad.sum()),
        outside_window=int(len(good) - len(measured_all)),
        inputs=len(in_ts),
        inputs_measured=len(in_measured),
        outputs_total=len(outputs),
        unreferenced_inputs=unreferenced,
    )
    figures = _figures(config, good, measured, in_ts, period, from_ms)
    if any(w.partial for w in run.disturbances):  # judged by the inputs' seconds
        explained = _subset(good, good[EXPLAINED].to_numpy())
        figures["by_input"] = stats.timeseries(
            explained[s.INPUT_TS_LATEST].to_numpy(), explained[LATENCY].to_numpy(), in_ts
        )
    return Measurement(
        **figures,
        records=records,
        missing=missing,
        wrong=wrong,
        from_ms=from_ms,
        outputs_of_unread_inputs=unread,
        input_lateness=_lateness(run, inputs),
        window_closing=_closing(run, config, measured, inputs),
        intended=intended.section(measured, inputs, period, _broker_kind(run)),
        updates=(
            found.updates.section(period.contains(found.updates.window_latest_ms))
            if found.updates is not None
            else None
        ),
    )


def _prepared(
    run: RunInfo,
    config: EvaluatorConfig,
    outputs: pd.DataFrame,
    inputs: pd.DataFrame | None,
    from_ms: int | None,
) -> tuple[pd.DataFrame, pd.DataFrame | None, int]:
    """The outputs to measure, the outputs the inputs imply where they are needed (a
    stage of its own, or a job whose outputs may leave out their inputs, which those
    fill in), and how many outputs were left out because their input came before
    ``from_ms`` and was not read."""
    own = stage(run.stage).own
    expected_all = None
    if inputs is not None and (own or not run.carries_inputs):
        lookbacks = (config.lookback_short_s, config.lookback_long_s)
        expected_all = exp.expected_outputs(run.stage, inputs, config.sliding_window_s, lookbacks)
    if own or (not run.carries_inputs and own_job.fills(run.stage) and inputs is not None):
        outputs = own_job.filled(run.stage, outputs, expected_all)
    unread = 0
    if from_ms is not None:
        early = (outputs[s.INPUT_TS_LATEST] < from_ms).fillna(False).to_numpy(bool)
        unread = int(early.sum())
        outputs = _subset(outputs, ~early)
    return outputs, expected_all, unread


def _broker_kind(run: RunInfo) -> str | None:
    """Where the run's broker ran (embedded, container, remote); None: not recorded."""
    return ((run.metadata.get("machine") or {}).get("broker") or {}).get("kind")


def _lateness(run: RunInfo, inputs: pd.DataFrame | None) -> dict[str, Any] | None:
    """How late the inputs of a stage with a watermark came (None for the others)."""
    if inputs is None or not stage(run.stage).stateful:
        return None
    return input_lateness(inputs, run.config.get("pipeline", {}).get("watermark_delay_ms"))


def _closing(
    run: RunInfo, config: EvaluatorConfig, measured: pd.DataFrame, inputs: pd.DataFrame | None
) -> dict[str, Any] | None:
    """A built-in window's latency split at its closing input (None for other stages, a
    custom window, whose data decide when it is written, or an engine with no event clock)."""
    found = stage(run.stage)
    if inputs is None or not found.window or found.updates or run.impl != "builtin":
        return None
    if run.event_clock not in CLOCKS:
        return None
    window_ms = SECOND_MS * (config.sliding_window_s if run.stage == "sliding" else 1)
    delay = int(run.config.get("pipeline", {}).get("watermark_delay_ms") or 0)
    return split(measured, inputs, window_ms, delay, run.event_clock)


def _figures(
    config: EvaluatorConfig,
    good: pd.DataFrame,
    measured: pd.DataFrame,
    in_ts: np.ndarray,
    period: Period,
    from_ms: int | None,
) -> dict[str, Any]:
    """The statistics, the per-second series and the throughput (the fields of a
    :class:`Measurement` besides its counts) of the ``measured`` outputs, the valid
    ones (``good``) and the inputs' broker times (``in_ts``)."""
    latency = measured[LATENCY].to_numpy()
    latency_earliest = measured[LATENCY_EARLIEST].to_numpy()
    in_measured = in_ts[period.contains(in_ts)]
    out_ts = good[TIMESTAMP].to_numpy()
    explained = _subset(good, good[EXPLAINED].to_numpy())
    series = stats.timeseries(explained[TIMESTAMP].to_numpy(), explained[LATENCY].to_numpy(), in_ts)
    measured_ts = measured[TIMESTAMP].to_numpy(np.int64)
    measured_series = stats.timeseries(measured_ts, latency, in_measured)
    first_output_delay = drain = None
    if len(out_ts) and len(in_ts):
        # the first input is known only when the topics were read from their beginning
        first_output_delay = None if from_ms is not None else int(out_ts.min()) - int(in_ts.min())
        drain = int(out_ts.max()) - int(in_ts.max())
    return {
        "period": period,
        "latency_ms": stats.describe(latency),
        "latency_earliest_ms": stats.describe(latency_earliest),
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
    }


def _well_formed(stage_name: str, outputs: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The valid outputs (their times as int64) and the malformed mask, malformed as
    :func:`evaluator.topics.output_fields.required_fields` defines it."""
    bad = (
        outputs[MALFORMED].to_numpy(bool) if MALFORMED in outputs else np.zeros(len(outputs), bool)
    )
    for col in output_fields.required_fields(stage_name):
        bad |= outputs[col].isna().to_numpy()
    good = _subset(outputs, ~bad)
    if any(good[c].dtype != np.int64 for c in output_fields.TIMES):
        good = good.astype({c: np.int64 for c in output_fields.TIMES})
    return good, bad


def _period(
    run: RunInfo, config: EvaluatorConfig, good: pd.DataFrame, inputs: pd.DataFrame | None
) -> tuple[np.ndarray, Period]:
    """The inputs' broker times and the measured period, from them or, when no input was
    read, from the outputs' carried ones."""
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
    return in_ts, measured_period(start, end, config, run.start_ms, run.end_ms)


def _explain(
    run: RunInfo,
    config: EvaluatorConfig,
    good: pd.DataFrame,
    inputs: pd.DataFrame | None,
    period: Period,
    expected_all: pd.DataFrame | None = None,
) -> _Explained:
    """Each output's latency from the inputs' own timestamps, matched by identity; an
    output no input explains keeps its carried time only to be counted (unexpected).
    ``expected_all``: the expected outputs, where they were derived already."""
    if inputs is None:
        good = with_latencies(good, period)
        good[EXPLAINED] = True
        return _Explained(good, None, None, None, None, None)
    identity = stage(run.stage).identity
    malformed_inputs = malformed_by_kind = None
    lookbacks = (config.lookback_short_s, config.lookback_long_s)
    if expected_all is None:
        expected_all = exp.expected_outputs(run.stage, inputs, config.sliding_window_s, lookbacks)
    expected_in = _subset(expected_all, period.contains(expected_all[s.INPUT_TS_LATEST].to_numpy()))
    if not stage(run.stage).raw:
        malformed_inputs = int((~exp.valid_mask(inputs)).sum()) if len(inputs) else 0
    if KIND in inputs:
        malformed_by_kind = exp.malformed_by_kind(inputs)
    updates = None
    if stage(run.stage).updates:
        good, updates = split_updates(good, expected_all, identity)
    rows = checks.lookup(good, expected_all, identity)
    good = with_latencies(
        good,
        period,
        checks.derived(good, expected_all, rows, s.INPUT_TS_LATEST),
        checks.derived(good, expected_all, rows, s.INPUT_TS_EARLIEST),
    )
    good[EXPLAINED] = rows >= 0
    return _Explained(
        good, rows, expected_all, expected_in, malformed_inputs, malformed_by_kind, updates
    )


def _subset(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """Rows of ``frame`` where ``mask``; the frame itself (no copy) when that is all of them."""
    if mask.all():
        return frame
    return frame.loc[mask].reset_index(drop=True)
