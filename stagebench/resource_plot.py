"""The run's latency, throughput and resource time series on one time axis.

Two clocks meet here: the evaluator's per-second series (timeseries.csv) are
in broker time, the resource samples (resources.csv) in this machine's wall
clock. They share one axis; when the broker runs on another host the two
clocks may disagree by tens of ms, which the axis label then says.
"""

import os
from pathlib import Path

from ground import rundir
from stagebench.resources import MACHINE, OUTSIDE

X_LABEL = (
    "seconds since the run started "
    "(latency and throughput: broker clock; CPU and memory: this machine's clock)"
)
REMOTE_NOTE = "the broker runs on another host: the two clocks may differ by up to tens of ms"


def plot_resources(
    run_dir: Path, remote_broker: bool = False, cores: int | None = None
) -> Path | None:
    """Plot timeseries.csv (evaluator) above resources.csv (sampler); None if either is empty.

    ``remote_broker``: the broker's clock is not this machine's (noted under
    the axis). ``cores``: where the CPU panel draws "all cores" (default: this
    machine's logical CPUs).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    latency = pd.read_csv(run_dir / rundir.TIMESERIES)
    usage = pd.read_csv(run_dir / rundir.RESOURCES)
    if latency.empty or usage.empty:
        return None
    origin = min(latency["second"].min(), usage["time_ms"].min() // 1000)
    fig, (ax_lat, ax_rate, ax_cpu, ax_mem) = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    t = latency["second"] - origin
    ax_lat.plot(t, latency["latency_p50_ms"], label="p50")
    ax_lat.plot(t, latency["latency_p99_ms"], label="p99")
    ax_lat.set_ylabel("latency (ms)")
    ax_lat.set_title(f"Run {run_dir.name}: latency, throughput and resources per second")
    ax_lat.legend()
    ax_rate.plot(t, latency["input_count"], label="input")
    ax_rate.plot(t, latency["output_count"], label="output")
    ax_rate.set_ylabel("messages / s")
    ax_rate.legend()
    groups = usage[~usage["process"].isin([MACHINE, OUTSIDE])]
    for i, (name, rows) in enumerate(groups.groupby("process")):
        ts = rows["time_ms"] / 1000 - origin
        color = f"C{i + 2}"  # C0/C1 are the latency and rate lines above
        ax_cpu.plot(ts, rows["cpu_percent"], color=color, label=name)
        ax_mem.plot(ts, rows["rss_mb"], color=color, label=f"{name} RSS")
        if rows["heap_used_mb"].notna().any():
            ax_mem.plot(
                ts, rows["heap_used_mb"], color=color, linestyle="--", label=f"{name} JVM heap used"
            )
    for name, label, style in (
        (MACHINE, "machine, all processes", {"color": "black", "linewidth": 1.2}),
        (OUTSIDE, "outside the run", {"color": "grey", "linestyle": ":"}),
    ):
        rows = usage[usage["process"] == name]
        if not rows.empty:
            ax_cpu.plot(rows["time_ms"] / 1000 - origin, rows["cpu_percent"], label=label, **style)
    all_cores = (cores or os.cpu_count() or 1) * 100
    ax_cpu.axhline(all_cores, color="black", linestyle="--", linewidth=0.8)
    ax_cpu.annotate(
        "all cores", (0, all_cores), xycoords=("axes fraction", "data"), xytext=(4, -12),
        textcoords="offset points", fontsize=8,
    )  # fmt: skip
    ax_cpu.set_ylim(bottom=0)
    ax_cpu.set_ylabel("CPU (% of one core)")
    ax_cpu.legend(fontsize=8)
    ax_mem.set_ylabel("memory (MB)")
    ax_mem.set_xlabel(X_LABEL + ("\n" + REMOTE_NOTE if remote_broker else ""))
    ax_mem.legend()
    for ax in (ax_lat, ax_rate, ax_cpu, ax_mem):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = run_dir / rundir.RESOURCES_PLOT
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
