"""The run's latency, throughput and resource time series on one time axis."""

from pathlib import Path

from ground import rundir


def plot_resources(run_dir: Path) -> Path | None:
    """Plot timeseries.csv (evaluator) above resources.csv (sampler); None if either is empty."""
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
    for i, (name, rows) in enumerate(usage.groupby("process")):
        ts = rows["time_ms"] / 1000 - origin
        color = f"C{i + 2}"  # C0/C1 are the latency and rate lines above
        ax_cpu.plot(ts, rows["cpu_percent"], color=color, label=name)
        ax_mem.plot(ts, rows["rss_mb"], color=color, label=f"{name} RSS")
        if rows["heap_used_mb"].notna().any():
            ax_mem.plot(
                ts, rows["heap_used_mb"], color=color, linestyle="--", label=f"{name} JVM heap used"
            )
    ax_cpu.set_ylabel("CPU (% of one core)")
    ax_cpu.legend()
    ax_mem.set_ylabel("memory (MB)")
    ax_mem.set_xlabel("seconds since start")
    ax_mem.legend()
    for ax in (ax_lat, ax_rate, ax_cpu, ax_mem):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = run_dir / rundir.RESOURCES_PLOT
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
