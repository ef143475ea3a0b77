"""A capacity search's picture: latency against the offered rate, and through time.

The left panel places every probe's p50 and p99 on the offered rate, marked by
verdict, with the capacity and the p50 limit drawn. A verdict often rests on a
trend, which that panel cannot show, so the right panel draws the per-second
p50 through the two probes that decide the answer, the last at capacity and the
last at the first unsustainable rate, each from its run directory, on the time
of its measured period (0 is where it starts; the lead-in and warm-up before).
"""

import json
from pathlib import Path
from typing import Any

from ground import rundir

STYLES = {"sustainable": ("tab:green", "o"), "unsustainable": ("tab:red", "x"),
          "publisher-bound": ("tab:gray", "s")}  # fmt: skip


def deciding_probes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The last probe run at the capacity and the last at the first unsustainable rate
    (its confirmation), those that exist, with a run directory."""
    chosen = []
    for rate, verdict in ((doc["sustainable_mps"], "sustainable"),
                          (doc["first_unsustainable_mps"], "unsustainable")):  # fmt: skip
        runs = [p for p in doc["probes"]
                if p["rate"] == rate and p["verdict"] == verdict and p["run_dir"]]  # fmt: skip
        if rate is not None and runs:
            chosen.append(runs[-1])
    return chosen


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
    fig, axes = plt.subplots(1, 2 if traces else 1, figsize=(14 if traces else 8, 4.8))
    ax = axes[0] if traces else axes
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
    if doc["sustainable_mps"]:
        ax.axvline(doc["sustainable_mps"], color="tab:blue", linestyle="--",
                   label=f"capacity {doc['sustainable_mps']:,.0f} msg/s")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the probes' own rates as ticks: a log axis labels its minor ticks 4.05×10³, 4.1×10³…
    ticks = sorted({p["rate"] for p in probes})
    ax.set_xticks(ticks, [f"{r:,.0f}" for r in ticks], rotation=45, fontsize="small")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("offered rate, msg/s (both input topics)")
    ax.set_ylabel("latency, ms (broker clock)")
    ax.set_title(f"{doc['stage']} ({doc['impl']}): latency against offered rate")
    ax.legend(fontsize="small")
    if traces:
        _plot_traces(axes[1], traces, limit_ms)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _trace(probe: dict[str, Any]) -> dict[str, Any] | None:
    """The probe's per-second p50 on its measured period's time, with its trend."""
    import pandas as pd

    run_dir = Path(probe["run_dir"])
    try:
        series = pd.read_csv(run_dir / rundir.TIMESERIES).dropna(subset=["latency_p50_ms"])
        summary = json.loads((run_dir / rundir.SUMMARY).read_text())
    except (OSError, ValueError):  # a probe whose evaluation failed has no series to draw
        return None
    period = summary["period"]
    steady = summary.get("steady_state") or {}
    slope = steady.get("slope_ms_per_min")
    trend = f"{steady['verdict']} {slope:+,.0f} ms/min" if slope is not None else "no trend"
    return {
        "label": f"{probe['rate']:,.0f} msg/s, {probe['verdict']} ({trend})",
        "color": STYLES[probe["verdict"]][0],
        "t": series["second"] - period["measured_from_ms"] / 1000,
        "p50": series["latency_p50_ms"],
        "measured_s": (period["measured_to_ms"] - period["measured_from_ms"]) / 1000,
    }


def _plot_traces(ax, traces: list[dict[str, Any]], limit_ms: float) -> None:
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
