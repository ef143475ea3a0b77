"""What a run's resource samples say: means and maxima per process group, the machine's
load over the measured period, and the reasons not to trust a latency because of it.

The samples come from :class:`stagebench.resources.sampler.ResourceSampler`; all CPU figures
are in % of one core.
"""

from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

import psutil

from stagebench.resources.pace import Pace
from stagebench.resources.sampler import MACHINE, OUTSIDE

SATURATED_BUSY_SHARE: Final = 0.90
"""A sampled second is saturated when busy CPU ≥ this share of all cores."""
SATURATED_SHARE_WARN: Final = 0.10
"""Warn when more than this share of the measured seconds were saturated."""
OUTSIDE_CORES_WARN: Final = 0.25
"""Warn when processes outside the run used more than this many cores on average."""
STEAL_PCT_WARN: Final = 5.0
"""Warn when the hypervisor took more than this % of one core on average."""


def summarise(
    samples: list[dict[str, Any]],
    from_ms: int | None = None,
    to_ms: int | None = None,
    cores: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Mean and max per process group and metric, and the machine's load, for summary.json.

    Only samples with ``from_ms ≤ time_ms ≤ to_ms`` count (either bound may be
    None). ``cores`` defaults to this machine's logical CPU count.
    """
    rows = [
        s
        for s in samples
        if (from_ms is None or s["time_ms"] >= from_ms) and (to_ms is None or s["time_ms"] <= to_ms)
    ]
    out: dict[str, dict[str, Any]] = {}
    for name in sorted({s["process"] for s in rows} - {MACHINE, OUTSIDE}):
        group = [s for s in rows if s["process"] == name]
        entry: dict[str, Any] = {"samples": len(group)}
        for metric in ("cpu_percent", "rss_mb", "heap_used_mb", "gc_ms_per_s", "thread_max_pct"):
            values = [r[metric] for r in group if r.get(metric) is not None]
            entry[f"{metric}_mean"] = _mean(values)
            entry[f"{metric}_max"] = max(values) if values else None
        entry["thread_max_name"] = _busiest(group)
        out[name] = entry
    out[MACHINE] = _machine_summary(rows, cores or psutil.cpu_count() or 1)
    return out


def _machine_summary(rows: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    def column(process: str, name: str) -> list[float]:
        return [r[name] for r in rows if r["process"] == process and r.get(name) is not None]

    total = column(MACHINE, "cpu_percent")
    outside = column(OUTSIDE, "cpu_percent")
    line = SATURATED_BUSY_SHARE * cores * 100
    return {
        "cores": cores,
        "samples": len(total),
        "cpu_total_pct_mean": _mean(total),
        "cpu_total_pct_max": max(total) if total else None,
        "cpu_outside_run_pct_mean": _mean(outside),
        "cpu_outside_run_pct_max": max(outside) if outside else None,
        "steal_pct_mean": _mean(column(MACHINE, "cpu_steal")),
        "iowait_pct_mean": _mean(column(MACHINE, "cpu_iowait")),
        "saturated_share": round(sum(v >= line for v in total) / len(total), 3) if total else None,
    }


def _busiest(group: list[dict[str, Any]]) -> str | None:
    """The name of the thread that was the group's busiest for the most CPU over the
    samples (a JVM's threads are named by their task: "Join[3] -> Sin"); None unnamed."""
    cpu: Counter[str] = Counter()
    for row in group:
        if row.get("thread_max_name") and row.get("thread_max_pct") is not None:
            cpu[row["thread_max_name"]] += row["thread_max_pct"]
    return cpu.most_common(1)[0][0] if cpu else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def machine_warnings(summary: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Reasons not to trust a latency because of the machine, from ``summarise``'s result."""
    machine = summary.get(MACHINE) or {}
    consequence = "this latency measures this machine, not the pipeline"
    warnings = []
    if (share := machine.get("saturated_share")) is not None and share > SATURATED_SHARE_WARN:
        warnings.append(
            f"the machine was saturated: all {machine['cores']} cores at least "
            f"{_num(SATURATED_BUSY_SHARE * 100)} % busy in {_num(share * 100)} % of the measured "
            f"seconds (warn above {_num(SATURATED_SHARE_WARN * 100)} %): {consequence}"
        )
    outside = machine.get("cpu_outside_run_pct_mean")
    if outside is not None and outside > OUTSIDE_CORES_WARN * 100:
        warnings.append(
            f"other processes used {outside / 100:.3g} cores on average during the measured "
            f"period (warn above {OUTSIDE_CORES_WARN:g} of a core): {consequence}"
        )
    if (steal := machine.get("steal_pct_mean")) is not None and steal > STEAL_PCT_WARN:
        warnings.append(
            f"the hypervisor took {_num(steal)} % of a core on average from this virtual machine "
            f"(CPU steal; warn above {_num(STEAL_PCT_WARN)} %): {consequence}"
        )
    return warnings


def _num(value: float) -> str:
    """At most one decimal, none when it is zero: 34, 10.5."""
    return f"{round(value, 1):g}"


def run_summary(
    samples: list[dict[str, Any]],
    from_ms: int | None,
    to_ms: int | None,
    cores: int,
    pace: Pace,
    broker: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """``summarise``'s result with the machine's pace (:func:`stagebench.resources.pace.section`)
    and what the broker was (``broker``: its description) and used (a container's
    processes are the broker's)."""
    summary = summarise(samples, from_ms, to_ms, cores)
    usage = summary.get("broker") or {}
    summary[MACHINE]["pace"] = pace
    summary[MACHINE]["broker"] = {
        **broker,
        "cpu_percent_mean": usage.get("cpu_percent_mean"),
        "rss_mb_max": usage.get("rss_mb_max"),
    }
    return summary
