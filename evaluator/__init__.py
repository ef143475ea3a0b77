"""Evaluator: per-record latency from broker timestamps, completeness, statistics, reports.

Public API (heavy imports are deferred until called, so ``stagebench --help``
and the CLI registration stay fast)::

    evaluator.evaluate(bootstrap, run, config, out_dir) -> dict   # summary.json content
    evaluator.RunInfo, evaluator.EvaluatorConfig, evaluator.load_run
    evaluator.compare.compare(run_dirs) -> list[dict]
"""

from pathlib import Path
from typing import Any

from evaluator.config import EvaluatorConfig
from evaluator.run_info import RunInfo, load_run, save_run

__all__ = ["EvaluatorConfig", "RunInfo", "evaluate", "load_run", "save_run"]


def evaluate(
    bootstrap: str,
    run: RunInfo,
    config: EvaluatorConfig,
    out_dir: Path,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Evaluate a run's topics and write its report into ``out_dir``; the summary.

    See :func:`evaluator.evaluation.evaluate`.
    """
    from evaluator.evaluation import evaluate as _evaluate

    return _evaluate(bootstrap, run, config, out_dir, overwrite=overwrite)
