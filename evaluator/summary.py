"""A run's :class:`evaluator.model.result.Summary` (summary.json), built from what an
evaluation measured and what the run says about itself.

The keys and what each holds are the model's (:mod:`evaluator.model.result`, documented in
docs/results-schema.md); here the sections are put together: the run's own sections
verbatim, the measurement's, the evaluator's warnings after the run's own, the
recovery after each disturbance and, for a job started behind a backlog, its catch-up.
"""

import logging
import platform
from dataclasses import replace
from typing import Any

import confluent_kafka
import numpy as np
import pandas as pd
import pyarrow

from evaluator.config import EvaluatorConfig
from evaluator.latencies.catchup import catch_up
from evaluator.measure import Measurement
from evaluator.model.record import as_dict
from evaluator.model.result import Backlog, Evaluation, MeasuredPeriod, Summary
from evaluator.model.run_info import RunInfo
from evaluator.model.summary_file import SCHEMA_VERSION
from evaluator.recovery import section as recovery
from evaluator.statistics import stats
from evaluator.text.caveats import (
    SEND_DELAY_WARN_MS,
    distrust,
    missing_warning,
    run_warnings,
    send_delay_warning,
    steady_warnings,
)
from ground.config import as_dict as config_dict

log = logging.getLogger(__name__)


def build_summary(
    run: RunInfo,
    config: EvaluatorConfig,
    bootstrap: str,
    result: Measurement,
    usage: pd.DataFrame | None = None,
) -> Summary:
    """The summary.json document, schema version :data:`SCHEMA_VERSION`, of ``run``
    measured as ``result``; its evaluator warnings are logged too. ``usage``: the run's
    sampled resources, for the cause of a fault (:func:`evaluator.recovery.windows.recoveries`)."""
    period = result.period
    run_section = run.as_summary()
    run_section["bootstrap"] = run.bootstrap or bootstrap
    records = as_dict(result.records)
    defects = distrust(records)
    own = defects + run_warnings(records, config, period, run.start_ms is not None)
    own += missing_warning(result.missing)
    own += steady_warnings(result.steady_state)
    behind_ms = (run.config.get("publisher") or {}).get("behind_warn_ms")
    own += send_delay_warning(result.intended, result.latency_ms, behind_ms or SEND_DELAY_WARN_MS)
    after = recovery.section(
        result.timeseries,
        run.disturbances,
        period.lo,
        period.hi,
        config.recovery_baseline_s,
        config.recovery_threshold,
        usage=usage,
        by_input=result.by_input,
    )
    own += recovery.warnings(after)
    for text in own:
        log.warning("%s", text)
    warnings = [*(str(w) for w in run.metadata.get("warnings", [])), *own]
    return Summary(
        schema_version=SCHEMA_VERSION,
        run=run_section,
        versions={**run.metadata.get("versions", {}), **_versions()},
        config={**run.config, "evaluator": config_dict(config)},
        metadata=run.metadata.copy(),
        period=MeasuredPeriod.of(period),
        latency_ms=result.latency_ms,
        latency_earliest_ms=result.latency_earliest_ms,
        latency_intended=result.intended,
        records=result.records,
        missing=result.missing,
        wrong=result.wrong,
        # nothing checked without the inputs: neither trusted nor not
        trusted=None if result.wrong is None else not defects,
        throughput=replace(result.throughput, backlog=_backlog(run, result)),
        steady_state=result.steady_state,
        confidence=result.confidence,
        recovery=after,
        input_lateness=_lateness(run, result),
        updates=result.updates,
        window_closing=result.window_closing,
        warmup=run.metadata.get("warmup"),
        machine=run.metadata.get("machine"),
        evaluation=Evaluation(
            engine="pandas",
            percentile_method=f"numpy.percentile method={stats.METHOD!r} on all values",
            from_ms=result.from_ms,
            outputs_of_unread_inputs=result.outputs_of_unread_inputs,
        ),
        warnings=warnings,
    )


def _backlog(run: RunInfo, result: Measurement) -> Backlog | None:
    """A job started behind a backlog (the run's ``job_started_ms`` mark, broker clock):
    its time to first output from its start and when it caught up; None for other runs."""
    started = run.metadata.get("marks_ms", {}).get("job_started_ms")
    if started is None:
        return None
    first = result.first_output_ms
    return Backlog(
        job_started_ms=started,
        time_to_first_output_ms=None if first is None else first - started,
        catch_up=catch_up(result.timeseries, started),
    )


def _lateness(run: RunInfo, result: Measurement) -> dict[str, Any] | None:
    """The measured lateness with the drops the run read from the engine's progress
    (its ``dropped_by_watermark`` metadata)."""
    if result.input_lateness is None:
        return None
    return {
        **result.input_lateness,
        "dropped_by_watermark": run.metadata.get("dropped_by_watermark"),
    }


def _versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "confluent_kafka": confluent_kafka.version()[0],
        "librdkafka": confluent_kafka.libversion()[0],
    }
