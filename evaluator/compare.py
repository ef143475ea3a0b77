"""Cumulative comparison of evaluated runs, stage by stage (001 paper, Fig. 3).

One row per run, ordered by the stage ladder. The increment of a stage is the
difference of its percentiles and those of the previous row's stage — a
difference of percentiles, not a percentile of per-record differences (the
runs are separate), and labelled as such everywhere it is shown.
"""

import json
import logging
from pathlib import Path
from typing import Any

from evaluator.report import LATENCIES, SUMMARY
from stagebench.errors import EvaluationError
from stagebench.schema import STAGES

log = logging.getLogger(__name__)

COLUMNS = ("stage", "impl", "p50", "p95", "p99", "increment_p50", "increment_p95", "increment_p99")
INCREMENT_NOTE = "increment_pXX = stage pXX − previous stage pXX (difference of percentiles, ms)"


def compare(run_dirs: list[Path]) -> list[dict[str, Any]]:
    """Rows ordered by stage (then implementation), with increments over the previous row."""
    rows = []
    for run_dir in run_dirs:
        path = Path(run_dir) / SUMMARY
        try:
            summary = json.loads(path.read_text())
        except FileNotFoundError as err:
            raise EvaluationError(f"{path} not found: evaluate the run first") from err
        except json.JSONDecodeError as err:
            raise EvaluationError(f"{path} is not valid JSON: {err}") from err
        run, lat = summary["run"], summary["latency_ms"]
        rows.append(
            {
                "stage": run["stage"],
                "impl": run.get("impl"),
                "p50": lat["p50"],
                "p95": lat["p95"],
                "p99": lat["p99"],
                "run_dir": str(run_dir),
            }
        )
    rows.sort(key=lambda r: (STAGES.index(r["stage"]), str(r["impl"])))
    previous = None
    for row in rows:
        for q in ("p50", "p95", "p99"):
            before = previous[q] if previous is not None else None
            row[f"increment_{q}"] = (
                row[q] - before if row[q] is not None and before is not None else None
            )
        previous = row
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain text table for terminals, with the increment note underneath."""
    header = [c.replace("increment_", "+") for c in COLUMNS]
    body = [[_cell(r.get(c)) for c in COLUMNS] for r in rows]
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)
    ]
    lines = [
        "  ".join(
            h.rjust(w) if i > 1 else h.ljust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        lines.append(
            "  ".join(
                v.rjust(w) if i > 1 else v.ljust(w)
                for i, (v, w) in enumerate(zip(b, widths, strict=True))
            )
        )
    lines.append(f"latency in ms; +pXX: {INCREMENT_NOTE}")
    return "\n".join(lines)


def to_markdown(rows: list[dict[str, Any]]) -> str:
    """The same table in Markdown."""
    header = "| stage | impl | p50 | p95 | p99 | +p50 | +p95 | +p99 |"
    lines = [header, "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| " + " | ".join(_cell(r.get(c)) for c in COLUMNS) + " |")
    lines.append("")
    lines.append(f"Latency in ms. {INCREMENT_NOTE}.")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], out_dir: Path, log_scale: bool = False) -> list[Path]:
    """The comparison plots: p50/p99 bars with increments, and the per-stage
    distributions side by side (from each run's latencies.parquet)."""
    import numpy as np
    import pandas as pd

    from evaluator import plots
    from evaluator.latency import IN_RANGE, LATENCY

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots.increments(rows, out_dir / "compare_increments.png")]
    samples, labels = [], []
    for r in rows:
        path = Path(r["run_dir"]) / LATENCIES
        if path.exists():
            frame = pd.read_parquet(path, columns=[LATENCY, IN_RANGE])
            samples.append(frame.loc[frame[IN_RANGE], LATENCY].to_numpy())
        else:
            log.warning("%s missing: no distribution for %s", path, r["run_dir"])
            samples.append(np.zeros(0))
        labels.append(f"{r['stage']}\n({r['impl']})")
    paths.append(
        plots.distributions(labels, samples, out_dir / "compare_distributions.png", log_scale)
    )
    return paths
