"""One run's evaluation: read, measure, summarise, report.

The flow: refuse topics that break the clock rule (:func:`evaluator.run_topics.check_clock`,
docs/method.md#clock), read the topics (:mod:`evaluator.run_topics`), measure them
(:mod:`evaluator.measure`), build the summary from the measurement
(:mod:`evaluator.summary`) and write everything into the run directory
(:mod:`evaluator.report`).
"""

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator import report
from evaluator.config import EvaluatorConfig
from evaluator.measure import measure
from evaluator.result import Measurement
from evaluator.run_info import RunInfo
from evaluator.run_topics import check_clock, read_from_ms, read_inputs, read_outputs
from evaluator.summary import build_summary


def evaluate(
    bootstrap: str,
    run: RunInfo,
    config: EvaluatorConfig,
    out_dir: Path,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Evaluate ``run`` from the broker at ``bootstrap``; write the report into ``out_dir``.

    Returns the summary (also written as summary.json).
    """
    out_dir = Path(out_dir)
    report.check_writable(out_dir, overwrite)
    check_clock(bootstrap, run)
    started = time.monotonic()
    result = measure_topics(bootstrap, run, config)
    summary = build_summary(run, config, bootstrap, result)
    seconds = round(time.monotonic() - started, 3)
    summary = replace(summary, evaluation=replace(summary.evaluation, seconds=seconds))
    document = summary.as_dict()
    report.write(out_dir, document, result.frames())
    return document


def measure_topics(bootstrap: str, run: RunInfo, config: EvaluatorConfig) -> Measurement:
    """Everything the report needs, computed in pandas from the topics."""
    from_ms = read_from_ms(run, config)
    outputs = read_outputs(bootstrap, run, config, from_ms)
    inputs = read_inputs(bootstrap, run, config, from_ms)
    return measure(run, config, outputs, inputs, from_ms)
