"""What limited a probe: the resource that saturated, named from the run's own samples
(:mod:`stagebench.resources.sampler`), so a capacity says whether it measured the engine,
a thread of it, its garbage collector, the broker, the publisher or the machine.

Pure: it reads the resource summary a run writes into summary.json
(``metadata.resources``, :func:`stagebench.resources.summary.run_summary`). The rules, in
order (docs/capacity.md#what-limited-it):

1. **publisher**: the probe was publisher-bound, or this process (the publisher and the
   output watcher, one Python interpreter) used a whole core;
2. **thread**: one thread of the engine or the broker at ``THREAD_BUSY_PCT`` of a core on
   average: a part of the pipeline that runs on one thread (a task at parallelism 1, a
   stream thread, a single-threaded sink), whatever the other cores do;
3. **gc**: the engine's collectors ran ``GC_BUSY_MS_PER_S`` per second or more;
4. **engine** or **broker**: its processes used ``CORES_BUSY_SHARE`` of the cores;
5. **machine**: every core busy in ``MACHINE_BUSY_SHARE`` of the measured seconds, shared
   among the run's processes (their shares said) and others;
6. **none**: nothing saturated: the engine's own pacing (its trigger, a buffer flushed per
   record, its commit interval) or the hand-offs between its threads, a setting's limit
   rather than a resource's.
"""

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from stagebench.resources.sampler import MACHINE

THREAD_BUSY_PCT: Final = 90.0
"""A thread is saturated at this % of one core, on average over the measured period."""
GC_BUSY_MS_PER_S: Final = 100.0
"""The collectors are the limit when they ran this many ms per second: a tenth of the time."""
CORES_BUSY_SHARE: Final = 0.9
"""A process group is saturated when it used this share of the cores it may use."""
MACHINE_BUSY_SHARE: Final = 0.5
"""The machine is the limit when all its cores were busy in this share of the seconds."""
PUBLISHER_CORE_PCT: Final = 90.0
"""This process (publisher and watcher, one interpreter) is saturated at this % of a core."""

GROUPS: Final = {"engine": "the engine", "broker": "the broker", "bench": "the publisher"}


@dataclass(frozen=True)
class Bottleneck:
    """What limited one probe: ``resource`` (publisher, thread, gc, engine, broker,
    machine, none), ``process`` (engine, broker or bench; None for the machine or none),
    and the sentence saying it with its figures."""

    resource: str
    process: str | None
    text: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def name(usage: Mapping[str, Any], publisher_bound: bool = False) -> Bottleneck | None:
    """What limited a probe, from its run's ``metadata.resources``; None without samples
    (a run from before the sampler, or a job that failed)."""
    machine = usage.get(MACHINE) or {}
    cores = machine.get("cores") or 1
    groups = {g: usage[g] for g in GROUPS if usage.get(g)}
    if not groups:
        return None
    bench = groups.get("bench", {})
    if publisher_bound or (bench.get("cpu_percent_mean") or 0) >= PUBLISHER_CORE_PCT:
        return Bottleneck(
            "publisher", "bench",
            f"the publisher: this process used {_core(bench.get('cpu_percent_mean'))}"
            + (", and the broker received less than the rate" if publisher_bound else ""),
        )  # fmt: skip
    for group in ("engine", "broker"):
        entry = groups.get(group, {})
        if (busy := entry.get("thread_max_pct_mean") or 0) >= THREAD_BUSY_PCT:
            thread = f" {entry['thread_max_name']!r}" if entry.get("thread_max_name") else ""
            return Bottleneck(
                "thread", group,
                f"one thread of {GROUPS[group]}{thread}: {busy:.0f} % of a core on average, "
                f"while {GROUPS[group]} used {_core(entry.get('cpu_percent_mean'))} of {cores}",
            )  # fmt: skip
    engine = groups.get("engine", {})
    if (gc := engine.get("gc_ms_per_s_mean") or 0) >= GC_BUSY_MS_PER_S:
        return Bottleneck(
            "gc", "engine", f"the engine's garbage collection: {gc:.0f} ms per second"
        )
    for group in ("engine", "broker"):
        cpu = groups.get(group, {}).get("cpu_percent_mean") or 0
        if cpu >= CORES_BUSY_SHARE * cores * 100:
            return Bottleneck(group, group, f"{GROUPS[group]}'s CPU: {_core(cpu)} of {cores}")
    if (share := machine.get("saturated_share") or 0) >= MACHINE_BUSY_SHARE:
        shares = ", ".join(
            f"{GROUPS[g]} {_core(e.get('cpu_percent_mean'))}" for g, e in groups.items()
        )
        outside = machine.get("cpu_outside_run_pct_mean")
        others = f", others {_core(outside)}" if outside is not None else ""
        return Bottleneck(
            "machine", None,
            f"the machine: all {cores} cores busy in {share:.0%} of the seconds "
            f"({shares}{others})",
        )  # fmt: skip
    return Bottleneck(
        "none", None,
        "no resource saturated ("
        + ", ".join(f"{GROUPS[g]} {_core(e.get('cpu_percent_mean'))}" for g, e in groups.items())
        + f" of {cores}): the engine's own pacing, its trigger, buffer flushes or commit "
        "interval, or the hand-offs between its threads",
    )  # fmt: skip


def _core(pct: float | None) -> str:
    """CPU % of one core as cores: "1.3 cores", "0.4 cores", "? cores"."""
    return "? cores" if pct is None else f"{pct / 100:.1f} cores"
