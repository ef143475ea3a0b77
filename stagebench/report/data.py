"""What report.html draws, read from a results directory's files.

The files (summary.json, timeseries.csv, latencies.parquet, resources.csv,
config.json, comparison.json, capacity.json; :mod:`ground.rundir`) are the stable
on-disk format, so the page is drawn from them alone and can be drawn again for any
directory later. A file that is missing (a failed run, a directory copied without its
parquet) leaves its part of the page out instead of failing it. Per-record latencies
are cut down to a grid of quantiles here, so that a suite's page stays small.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator.files import hdrlog
from evaluator.model.result import Summary
from evaluator.model.summary_file import load_summary
from ground import rundir
from ground.errors import EvaluationError

CDF_GRID = np.unique(np.concatenate([np.linspace(0.0, 1.0, 201), 1 - np.logspace(-1, -5, 161)]))
"""The probabilities the CDF is drawn at: every half per cent, and on to 1 − 10⁻⁵ in
steps even on a log scale of the tail, where p99 and p99.9 sit."""


@dataclass(frozen=True)
class Cdf:
    """Latency (ms) at each probability of :data:`CDF_GRID`, from ``count`` latencies."""

    probability: np.ndarray
    latency_ms: np.ndarray
    count: int


@dataclass(frozen=True)
class RunData:
    """One run directory's files, None each where missing; ``config`` is config.json, or
    the copy in summary.json where the evaluation was written elsewhere (``--out``)."""

    dir: Path
    summary: Summary
    config: dict[str, Any] | None
    timeseries: pd.DataFrame | None
    cdf: Cdf | None
    resources: pd.DataFrame | None


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError as err:
        raise EvaluationError(f"{path} is not JSON: {err}") from err
    return doc


def cdf(latencies_ms: np.ndarray) -> Cdf | None:
    """The latencies' quantiles on :data:`CDF_GRID` (numpy's linear method, as summary.json's
    percentiles); None without latencies."""
    values = np.asarray(latencies_ms)
    if values.size == 0:
        return None
    return Cdf(CDF_GRID, np.quantile(values, CDF_GRID, method="linear"), int(values.size))


def _csv(path: Path) -> pd.DataFrame | None:
    try:
        frame = pd.read_csv(path)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return None
    return None if frame.empty else frame


def load_run(run_dir: Path) -> RunData:
    summary = load_summary(run_dir)
    parquet = run_dir / rundir.LATENCIES
    return RunData(
        dir=run_dir,
        summary=summary,
        config=read_json(run_dir / rundir.CONFIG) or summary.config,
        timeseries=_csv(run_dir / rundir.TIMESERIES),
        cdf=cdf(hdrlog.measured(parquet)[1]) if parquet.exists() else None,
        resources=_csv(run_dir / rundir.RESOURCES),
    )


def located(name: str | None, beside: Path) -> Path | None:
    """A probe's run directory named in capacity.json: where it was written, or, when the
    results have moved, the directory of that name in ``beside``."""
    if not name:
        return None
    path = Path(name)
    return path if path.is_dir() else beside / path.name
