"""A capacity search's picture: latency and the chance of passing against the offered
rate, and latency through time.

The top left panel places every probe's p50 and p99 on the offered rate, marked
by verdict, with the capacity, its 95 % interval and the p50 limit drawn. Below
it, on the same rates, each probe's outcome (1: passed, 0: failed) and the
fitted probability of passing (:func:`stagebench.capacity.fit.pass_band`: the
posterior median and its 95 % band), whose 0.5 crossing is the capacity. A
verdict often rests on a trend, which neither panel can show, so the right panel
draws the per-second p50 through the two probes at the ends of the bracket the
search narrowed, the last at its highest sustainable rate and the last at its
lowest unsustainable one, each from its run directory, on the time of its
measured period (0 is where it starts; the lead-in and warm-up before).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluator.summary_file import load_summary
from ground import files, rundir
from stagebench.capacity.fit import pass_band
from stagebench.report.capacity import deciding_probes

if TYPE_CHECKING:  # matplotlib, which this module imports when it draws
    from matplotlib.axes import Axes

STYLES = {"sustainable": ("tab:green", "o"), "unsustainable": ("tab:red", "x"),
          "publisher-bound": ("tab:gray", "s")}  # fmt: skip
TICK_LABELS = 12
"""At most this many rate labels across the axis: a rate closer to the last labelled one
than a twelfth of the axis (on its log scale) gets a tick but no label, as the last
probes of a search sit within a few per cent of each other and would overprint."""


def plot(doc: dict[str, Any], path: Path) -> Path | None:
    """capacity.png, or None when no probe measured a latency."""
    probes = [p for p in doc["probes"] if p["p50"] is not None]
    if not probes:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    traces = [t for t in map(_trace, deciding_probes(doc)) if t is not None]
    fitted = doc["capacity_mps"] is not None
    fig = plt.figure(figsize=(14 if traces else 8, 8.4 if fitted else 4.8))
    grid = fig.add_gridspec(2 if fitted else 1, 2 if traces else 1)
    ax = fig.add_subplot(grid[0, 0])
    for verdict, (color, marker) in STYLES.items():
        chosen = [p for p in probes if p["verdict"] == verdict]
        if not chosen:
            continue
        rates = [p["rate"] for p in chosen]
        ax.scatter(rates, [p["p50"] for p in chosen], color=color, marker=marker,
                   label=f"p50, {verdict}")  # fmt: skip
        ax.scatter(rates, [p["p99"] for p in chosen], color=color, marker=marker, alpha=0.4,
                   label=f"p99, {verdict}")  # fmt: skip
    limit_ms = doc["criteria"]["max_p50_ms"]
    ax.axhline(limit_ms, color="tab:gray", linestyle=":", label=f"p50 limit {limit_ms / 1000:g} s")
    _mark_capacity(ax, doc)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("latency, ms (broker clock)")
    ax.set_title(f"{doc['stage']} ({doc['impl']}): latency against offered rate")
    ax.legend(fontsize="small")
    bottom = ax
    if fitted:
        ax.tick_params(labelbottom=False)
        bottom = fig.add_subplot(grid[1, 0], sharex=ax)
        _plot_pass_curve(bottom, doc)
    # the probes' own rates as ticks: a log axis labels its minor ticks 4.05×10³, 4.1×10³…
    ticks = sorted({p["rate"] for p in doc["probes"]})
    bottom.set_xticks(ticks, _tick_labels(ticks), rotation=45, fontsize="small")
    bottom.xaxis.set_minor_formatter(NullFormatter())
    bottom.set_xlabel("offered rate, msg/s (both input topics)")
    if traces:
        _plot_traces(fig.add_subplot(grid[:, 1]), traces, limit_ms)
    fig.tight_layout()
    with files.replacing(path, binary=True) as out:
        fig.savefig(out, dpi=110, format="png")
    plt.close(fig)
    return path


def _mark_capacity(ax: "Axes", doc: dict[str, Any]) -> None:
    """The fitted capacity and its 95 % interval, or without a fit the highest rate found
    sustainable."""
    if doc["capacity_mps"] is not None:
        low, high = doc["capacity_ci95_mps"]
        ax.axvspan(low, high, color="tab:blue", alpha=0.08,
                   label=f"95 % interval {low:,.0f}–{high:,.0f}")  # fmt: skip
        ax.axvline(doc["capacity_mps"], color="tab:blue", linestyle="--",
                   label=f"capacity {doc['capacity_mps']:,.0f} msg/s")  # fmt: skip
    elif doc["sustainable_mps"]:
        ax.axvline(doc["sustainable_mps"], color="tab:blue", linestyle="--",
                   label=f"highest sustainable {doc['sustainable_mps']:,.0f} msg/s")  # fmt: skip


def _plot_pass_curve(ax: "Axes", doc: dict[str, Any]) -> None:
    """Every probe the publisher fed as passed (1) or failed (0), and the fitted chance of
    passing with its 95 % band."""
    fed = [p for p in doc["probes"] if p["verdict"] != "publisher-bound"]
    rates = [p["rate"] for p in fed]
    passed = [p["verdict"] == "sustainable" for p in fed]
    low, high = doc["capacity_ci95_mps"]
    at = np.geomspace(min(*rates, low) / 1.05, max(*rates, high) * 1.05, 200)
    band = pass_band(rates, passed, at)
    ax.fill_between(at, band[0], band[2], color="tab:blue", alpha=0.15,
                    label="95 % of the posterior")  # fmt: skip
    ax.plot(at, band[1], color="tab:blue", label="chance of passing (posterior median)")
    for verdict, outcome in (("sustainable", 1.0), ("unsustainable", 0.0)):
        color, marker = STYLES[verdict]
        chosen = [rate for rate, ok in zip(rates, passed, strict=True) if ok == bool(outcome)]
        ax.scatter(chosen, [outcome] * len(chosen), color=color, marker=marker, alpha=0.6,
                   label=f"probe {verdict}")  # fmt: skip
    for level in (0.5, 0.9):
        ax.axhline(level, color="tab:gray", linestyle=":", linewidth=0.8)
    ax.plot([doc["pass90_mps"]], [0.9], color="tab:blue", marker="D", linestyle="none",
            label=f"passed 90 % of the time: {doc['pass90_mps']:,.0f} msg/s")  # fmt: skip
    _mark_capacity(ax, doc)
    ax.set_ylim(-0.08, 1.08)
    ax.set_ylabel("chance a probe passes")
    ax.set_title(f"pass or fail against offered rate, {len(fed)} probes")
    ax.legend(fontsize="small")


def _tick_labels(ticks: list[float]) -> list[str]:
    gap = (ticks[-1] / ticks[0]) ** (1 / TICK_LABELS)
    labels, last = [], 0.0
    for rate in ticks:
        shown = rate >= last * gap
        labels.append(f"{rate:,.0f}" if shown else "")
        last = rate if shown else last
    return labels


def _trace(probe: dict[str, Any]) -> dict[str, Any] | None:
    """The probe's per-second p50 on its measured period's time, with its trend."""
    import pandas as pd

    run_dir = Path(probe["run_dir"])
    try:
        series = pd.read_csv(run_dir / rundir.TIMESERIES).dropna(subset=["latency_p50_ms"])
    except (OSError, ValueError):  # a probe whose evaluation failed has no series to draw
        return None
    if not (run_dir / rundir.SUMMARY).is_file():  # nor one whose evaluation stopped midway
        return None
    summary = load_summary(run_dir)
    period = summary.period
    steady = summary.steady_state or {}
    slope = steady.get("slope_ms_per_min")
    trend = f"{steady['verdict']} {slope:+,.0f} ms/min" if slope is not None else "no trend"
    return {
        "label": f"{probe['rate']:,.0f} msg/s, {probe['verdict']} ({trend})",
        "color": STYLES[probe["verdict"]][0],
        "t": series["second"] - period.measured_from_ms / 1000,
        "p50": series["latency_p50_ms"],
        "measured_s": (period.measured_to_ms - period.measured_from_ms) / 1000,
    }


def _plot_traces(ax: "Axes", traces: list[dict[str, Any]], limit_ms: float) -> None:
    for trace in traces:
        ax.plot(trace["t"], trace["p50"], color=trace["color"], label=trace["label"])
    ax.axhline(limit_ms, color="tab:gray", linestyle=":", label="p50 limit")
    ax.axvspan(0, max(t["measured_s"] for t in traces), color="tab:blue", alpha=0.08,
               label="measured period")  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the measured period started (before: lead-in and warm-up)")
    ax.set_ylabel("per-second p50, ms")
    ax.set_title("at capacity and just above it")
    ax.legend(fontsize="small")
