"""One run's evaluation: read, measure, summarise, report.

The flow: refuse topics that break the clock rule (:func:`evaluator.run_topics.check_clock`,
docs/method.md#clock), read the topics (:mod:`evaluator.run_topics`), measure them
(:mod:`evaluator.measure`), build the summary from the measurement
(:mod:`evaluator.summary`) and write everything into the run directory
(:mod:`evaluator.files.report`).
"""

import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.files import report
from evaluator.measure import Measurement, measure
from evaluator.model.result import Summary
from evaluator.model.run_info import RunInfo
from evaluator.run_topics import check_clock, read_from_ms, read_inputs, read_outputs
from evaluator.summary import build_summary
from ground import rundir
from ground.errors import EvaluationError


def evaluate(
    bootstrap: str,
    run: RunInfo,
    config: EvaluatorConfig,
    out_dir: Path,
    overwrite: bool = False,
    run_dir: Path | None = None,
) -> Summary:
    """Evaluate ``run`` from the broker at ``bootstrap``; write the report into ``out_dir``.

    Returns the summary (also written as summary.json, its :meth:`Summary.as_dict`).
    ``run_dir`` (default ``out_dir``) holds the run's resources.csv, where a fault's
    process is looked up.
    """
    out_dir = Path(out_dir)
    report.check_writable(out_dir, overwrite)
    check_clock(bootstrap, run)
    started = time.monotonic()
    result = measure_topics(bootstrap, run, config)
    usage = read_usage(Path(run_dir or out_dir) / rundir.RESOURCES)
    summary = build_summary(run, config, bootstrap, result, usage)
    seconds = round(time.monotonic() - started, 3)
    summary = replace(summary, evaluation=replace(summary.evaluation, seconds=seconds))
    report.write(out_dir, summary.as_dict(), result.frames())
    return summary


def read_usage(path: Path) -> pd.DataFrame | None:
    """The sampled CPU and GC of the run's processes; None for a run without them."""
    if not path.is_file():
        return None
    columns = ["time_ms", "process", "cpu_percent", "gc_ms_per_s"]
    try:
        return pd.read_csv(path, usecols=columns)
    except (ValueError, pd.errors.ParserError) as err:
        raise EvaluationError(f"{path}: not a resources file this version reads ({err})") from err


def measure_topics(bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> Measurement:
    """Everything the report needs, computed in pandas from the topics."""
    from_ms = read_from_ms(run, config)
    outputs = read_outputs(bootstrap, run, config, from_ms)
    inputs = read_inputs(bootstrap, run, config, from_ms)
    return measure(run, config, outputs, inputs, from_ms)
