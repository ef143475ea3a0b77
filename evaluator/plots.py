"""PNG plots of one run and of a comparison of runs (matplotlib, Agg backend).

Every plot has a title naming the stage, axes with units (ms, msg/s) and, for
the distributions, an optional log scale (latency tails span decades).
"""

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evaluator.comparison_result import ComparisonRow
from evaluator.latency import EXPLAINED, IN_RANGE, LATENCY
from ground import rundir

if TYPE_CHECKING:  # scipy's statistics load only where a comparison is made
    from evaluator.compare import Comparison

log = logging.getLogger(__name__)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(run: dict[str, Any]) -> str:
    return f"{run['stage']} ({run['impl']})"


def run_plots(
    summary: dict[str, Any], result: dict[str, Any], out_dir: Path, log_scale: bool
) -> list[Path]:
    """Histogram, CDF and time series of one run; the paths written. The time series
    shades the run's disturbance windows and marks each recovery (``summary["recovery"]``)."""
    plt = _pyplot()
    label = _label(summary["run"])
    frame = result.get("latencies")
    values = (
        frame.loc[frame[IN_RANGE].to_numpy() & frame[EXPLAINED].to_numpy(), LATENCY].to_numpy()
        if frame is not None
        else np.zeros(0)
    )
    paths = []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if values.size:
        pos = values[values > 0]
        if log_scale and pos.size:
            bins = np.logspace(np.log10(pos.min()), np.log10(pos.max() + 1), 80)
            ax.set_xscale("log")
        else:
            bins = 80
        ax.hist(values if not log_scale else pos, bins=bins, color="tab:blue")
        for key, style in (("p50", "--"), ("p99", ":")):
            q = summary["latency_ms"][key]
            ax.axvline(q, color="black", linestyle=style, label=f"{key} = {q:,.1f} ms")
        ax.legend()
    ax.set_title(f"Latency distribution, stage {label}")
    ax.set_xlabel("latency (ms), output LogAppendTime − latest input LogAppendTime")
    ax.set_ylabel("outputs")
    paths.append(_save(fig, out_dir / rundir.LATENCY_HIST, plt))

    fig, ax = plt.subplots(figsize=(8, 4.5))
    if values.size:
        # 2 001 quantiles draw the curve; plotting every one of 10 M points would not
        fractions = np.linspace(0, 1, 2001)
        quantiles = np.quantile(values, fractions)
        ax.plot(quantiles, fractions, color="tab:blue")
        if log_scale and quantiles[0] > 0:
            ax.set_xscale("log")
    ax.set_title(f"Latency CDF, stage {label}")
    ax.set_xlabel("latency (ms)")
    ax.set_ylabel("fraction of outputs")
    ax.grid(True, alpha=0.3)
    paths.append(_save(fig, out_dir / rundir.LATENCY_CDF, plt))

    ts = result["timeseries"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    if len(ts):
        t = ts["second"] - ts["second"].iloc[0]
        top.plot(t, ts["latency_p50_ms"], label="p50")
        top.plot(t, ts["latency_p99_ms"], label="p99")
        top.legend()
        if log_scale:
            top.set_yscale("log")
        bottom.plot(t, ts["input_count"], label="input")
        bottom.plot(t, ts["output_count"], label="output")
        bottom.legend()
        period = summary["period"]
        for axis in (top, bottom):
            axis.axvspan(
                (period["measured_from_ms"] // 1000) - ts["second"].iloc[0],
                (period["measured_to_ms"] // 1000) - ts["second"].iloc[0],
                color="grey",
                alpha=0.12,
            )
        _disturbances((top, bottom), summary.get("recovery"), int(ts["second"].iloc[0]))
    top.set_title(f"Per-second latency and throughput, stage {label} (shaded: measured)")
    top.set_ylabel("latency (ms)")
    bottom.set_ylabel("messages/s")
    bottom.set_xlabel("time since first record (s, broker clock)")
    paths.append(_save(fig, out_dir / rundir.TIMESERIES_PLOT, plt))
    return paths


def _disturbances(axes, recovery: dict[str, Any] | None, first_s: int) -> None:
    """Shade each disturbance window (a burst, an outage) and mark where latency recovered."""
    windows = recovery["windows"] if recovery else []
    if not windows:
        return
    # one legend entry per kind: matplotlib leaves out labels that start with "_"
    first = {w["kind"]: i for i, w in reversed(list(enumerate(windows)))}
    first_recovered = next((i for i, w in enumerate(windows) if w["recovery_s"] is not None), -1)
    for axis in axes:
        for i, w in enumerate(windows):
            start, end = w["start_ms"] / 1000 - first_s, w["end_ms"] / 1000 - first_s
            kind = w["kind"] if first[w["kind"]] == i else "_"
            axis.axvspan(start, end, color="tab:red", alpha=0.2, label=kind)
            if w["recovery_s"] is not None:
                label = "recovered" if i == first_recovered else "_"
                axis.axvline(end + w["recovery_s"], color="tab:green", linestyle="--", label=label)
        axis.legend()


def comparison_plots(
    comparison: "Comparison", out_dir: Path, log_scale: bool = False
) -> list[Path]:
    """The plots of a stage table: p50/p99 bars with intervals and increments, and the
    per-stage distributions side by side (from each run's latencies.parquet); the paths
    written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = comparison.rows
    paths = [increments(rows, out_dir / rundir.COMPARE_INCREMENTS, comparison.differences)]
    samples, labels = [], []
    for r in rows:
        path = Path(r.run_dir) / rundir.LATENCIES
        if path.exists():
            frame = pd.read_parquet(path, columns=[LATENCY, IN_RANGE])
            samples.append(frame.loc[frame[IN_RANGE], LATENCY].to_numpy())
        else:
            log.warning("%s missing: no distribution for %s", path, r.run_dir)
            samples.append(np.zeros(0))
        labels.append(f"{r.stage}\n({r.impl})")
    paths.append(distributions(labels, samples, out_dir / rundir.COMPARE_DISTRIBUTIONS, log_scale))
    return paths


def distributions(
    labels: list[str], samples: list[np.ndarray], path: Path, log_scale: bool
) -> Path:
    """Per-stage latency distributions side by side (box plots, whiskers p1–p99)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(labels)), 5))
    data = [x if x.size else np.array([np.nan]) for x in samples]
    ax.boxplot(data, whis=(1, 99), showfliers=False, tick_labels=labels)
    if log_scale:
        ax.set_yscale("log")
    ax.set_title("Latency per stage, cumulative\n(box p25–p75, line p50, whiskers p1–p99)")
    ax.set_ylabel("latency (ms)")
    ax.set_xlabel("stage (implementation)")
    ax.grid(True, axis="y", alpha=0.3)
    return _save(fig, path, plt)


def increments(
    rows: list[ComparisonRow], path: Path, differences: list[str] | tuple[str, ...] = ()
) -> Path:
    """Bar chart of p50 and p99 per stage with their 95 % intervals (error bars, when
    known), annotated with each stage's increment ("n.s." when its interval contains
    0); "!" marks a stage whose runs have warnings; the title says NOT COMPARABLE
    when the runs differ in more than stage and implementation."""
    plt = _pyplot()
    labels = [f"{r.stage}{' !' if r.mark else ''}\n({r.impl})" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 5))
    for q, dx in (("p50", -0.2), ("p99", 0.2)):
        values = [getattr(r, q) for r in rows]
        heights = np.array([v if v is not None else np.nan for v in values])
        errors = _error_bars(rows, q)
        ax.bar(x + dx, heights, 0.4, label=q, yerr=errors, capsize=3)
        tops = heights + np.nan_to_num(errors[1])
        for i, r in enumerate(rows):
            inc, significant = (
                getattr(r, f"increment_{q}"),
                getattr(r, f"increment_{q}_significant"),
            )
            if inc is not None:
                text = f"{inc:+,.0f}"
                if significant is False:
                    text += " n.s."
                elif significant is None:
                    text += " n.v."
                ax.annotate(text, (x[i] + dx, tops[i]), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels)
    title = (
        "Cumulative latency per stage, with 95 % intervals\n"
        "labels: increment over the stage it builds on (difference of percentiles, ms)\n"
        "n.s.: not significant (Holm); n.v.: no verdict (< 3 runs a stage); "
        "!: the stage's runs have warnings"
    )
    if differences:
        title = f"NOT COMPARABLE: the runs differ in {len(differences)} setting(s)\n{title}"
    ax.set_title(title, fontsize=9, color="red" if differences else "black")
    ax.set_ylabel("latency (ms)")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    return _save(fig, path, plt)


def _error_bars(rows: list[ComparisonRow], q: str) -> np.ndarray:
    """Distances from each row's pXX down to and up to its interval (nan where
    unknown: no bar; clipped at 0: an across-runs interval is centred on the mean,
    not the median)."""
    bars = np.full((2, len(rows)), np.nan)
    for i, r in enumerate(rows):
        value, bounds = getattr(r, q), getattr(r, f"{q}_ci95")
        if bounds is not None and value is not None:
            bars[:, i] = max(0.0, value - bounds[0]), max(0.0, bounds[1] - value)
    return bars


def _save(fig, path: Path, plt) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
