"""Cumulative comparison of evaluated runs, stage by stage (docs/method.md#sources).

Runs are grouped by (stage, implementation): one row per group, ordered by the
stage ladder, with the median of each percentile across repetitions and its
spread (min–max). The increment of a row is the difference of its percentiles
and those of the nearest earlier stage of the ladder present in the comparison
— its row of the same implementation, else its built-in row (custom tumbling
builds on the built-in join). It is a difference of percentiles, not a
percentile of per-record differences (the runs are separate), and labelled as
such everywhere it is shown.
"""

import json
import logging
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator import plots
from evaluator.latency import IN_RANGE, LATENCY
from ground import rundir
from ground.errors import EvaluationError
from ground.stages import STAGES

log = logging.getLogger(__name__)

QUANTILES = ("p50", "p95", "p99")
COLUMNS = (
    "stage",
    "impl",
    "p50",
    "p95",
    "p99",
    "increment_p50",
    "increment_p95",
    "increment_p99",
    "increment_over",
    "repetitions",
)
INCREMENT_NOTE = (
    "increment_pXX = stage pXX − pXX of the earlier stage shown under 'over' "
    "(difference of percentiles, ms)"
)
BASELINE_IMPL = "builtin"


def compare(run_dirs: list[Path]) -> list[dict[str, Any]]:
    """One row per (stage, impl) of the evaluated runs, in ladder order, with increments.

    Keys of a row: stage, impl, repetitions, p50, p95, p99 (medians across the
    repetitions), p50_spread, p95_spread, p99_spread ([min, max]),
    increment_p50, increment_p95, increment_p99, increment_over (the
    "stage/impl" the increments are taken against, None for the first stage),
    run_dir (a representative run: the middle one) and run_dirs (all of them).
    """
    return aggregate([run_row(Path(d)) for d in run_dirs])


def run_row(run_dir: Path) -> dict[str, Any]:
    """stage, impl, p50, p95, p99 and run_dir of one evaluated run.

    EvaluationError naming the file when summary.json is missing, not JSON, or
    not a summary this version understands (foreign or older schema).
    """
    path = Path(run_dir) / rundir.SUMMARY
    try:
        summary = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise EvaluationError(f"{path} not found: evaluate the run first") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise EvaluationError(f"{path} is not valid JSON: {err}") from err
    try:
        run, lat = summary["run"], summary["latency_ms"]
        row = {
            "stage": run["stage"],
            "impl": run.get("impl") or BASELINE_IMPL,
            **{q: _number(lat[q]) for q in QUANTILES},
            "run_dir": str(run_dir),
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(
            f"{path} is not a stagebench summary this version can compare "
            f"(missing or invalid {err}); re-evaluate the run"
        ) from err
    if row["stage"] not in STAGES:
        raise EvaluationError(f"{path}: unknown stage {row['stage']!r} (known: {STAGES})")
    return row


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"percentile {value!r}")
    return float(value)


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (stage, impl) from per-run rows (:func:`run_row`): medians,
    spreads, increments; ordered by the stage ladder, then implementation."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["stage"], row["impl"]), []).append(row)
    out: list[dict[str, Any]] = []
    for stage, impl in sorted(groups, key=lambda k: (STAGES.index(k[0]), str(k[1]))):
        runs = groups[(stage, impl)]
        entry: dict[str, Any] = {"stage": stage, "impl": impl, "repetitions": len(runs)}
        for q in QUANTILES:
            values = [r[q] for r in runs if r[q] is not None]
            entry[q] = statistics.median(values) if values else None
            entry[f"{q}_spread"] = [min(values), max(values)] if values else None
        entry["run_dir"] = runs[len(runs) // 2]["run_dir"]
        entry["run_dirs"] = [r["run_dir"] for r in runs]
        out.append(entry)
    for entry in out:
        base = _baseline(entry, out)
        for q in QUANTILES:
            before = base[q] if base is not None else None
            entry[f"increment_{q}"] = (
                entry[q] - before if entry[q] is not None and before is not None else None
            )
        entry["increment_over"] = f"{base['stage']}/{base['impl']}" if base else None
    return out


def _baseline(entry: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The row ``entry``'s increments are taken against: the nearest earlier stage
    with rows, its row of the same impl, else its built-in row (else None)."""
    index = STAGES.index(entry["stage"])
    earlier = [r for r in rows if STAGES.index(r["stage"]) < index]
    if not earlier:
        return None
    nearest = max(STAGES.index(r["stage"]) for r in earlier)
    candidates = {r["impl"]: r for r in earlier if STAGES.index(r["stage"]) == nearest}
    return candidates.get(entry["impl"]) or candidates.get(BASELINE_IMPL)


def format_cell(value: Any) -> str:
    """One table cell: "-" for None, numbers with thousands separators, floats to 0.1."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


_HEADERS = {"repetitions": "runs", "increment_over": "over"}
_LEFT = ("stage", "impl", "increment_over")


def format_table(rows: list[dict[str, Any]]) -> str:
    """A plain text table for terminals, with the increment note underneath."""
    header = [_HEADERS.get(c, c.replace("increment_", "+")) for c in COLUMNS]
    body = [[format_cell(r.get(c)) for c in COLUMNS] for r in rows]
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)
    ]
    lines = [
        "  ".join(
            h.ljust(w) if COLUMNS[i] in _LEFT else h.rjust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        lines.append(
            "  ".join(
                v.ljust(w) if COLUMNS[i] in _LEFT else v.rjust(w)
                for i, (v, w) in enumerate(zip(b, widths, strict=True))
            )
        )
    lines.append(f"latency in ms; +pXX: {INCREMENT_NOTE}")
    return "\n".join(lines)


def to_markdown(rows: list[dict[str, Any]]) -> str:
    """The same table in Markdown."""
    header = [_HEADERS.get(c, c.replace("increment_", "+")) for c in COLUMNS]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "".join("---|" if c in _LEFT else "---:|" for c in COLUMNS),
    ]
    for r in rows:
        lines.append("| " + " | ".join(format_cell(r.get(c)) for c in COLUMNS) + " |")
    lines.append("")
    lines.append(f"Latency in ms. {INCREMENT_NOTE}.")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], out_dir: Path, log_scale: bool = False) -> list[Path]:
    """The comparison plots: p50/p99 bars with increments, and the per-stage
    distributions side by side (from each run's latencies.parquet)."""

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [plots.increments(rows, out_dir / rundir.COMPARE_INCREMENTS)]
    samples, labels = [], []
    for r in rows:
        path = Path(r["run_dir"]) / rundir.LATENCIES
        if path.exists():
            frame = pd.read_parquet(path, columns=[LATENCY, IN_RANGE])
            samples.append(frame.loc[frame[IN_RANGE], LATENCY].to_numpy())
        else:
            log.warning("%s missing: no distribution for %s", path, r["run_dir"])
            samples.append(np.zeros(0))
        labels.append(f"{r['stage']}\n({r['impl']})")
    paths.append(
        plots.distributions(labels, samples, out_dir / rundir.COMPARE_DISTRIBUTIONS, log_scale)
    )
    return paths
