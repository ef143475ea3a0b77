"""CPU and memory of the engine and broker processes, sampled every second.

A sampler thread watches named process groups (``engine``: the pipeline
process and its Spark JVM; ``broker``: the Kafka JVM). Each sample records,
per group, CPU % (of one core, summed over the group's processes), resident
memory and JVM heap in use (from the JVMs' hsperfdata, where available).
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from ground.jvm.heap import heap_used_bytes

log = logging.getLogger(__name__)

MB = 1024 * 1024


@dataclass
class _Group:
    roots: Callable[[], list[int]]
    procs: dict[int, psutil.Process] = field(default_factory=dict)


class ResourceSampler:
    """Samples process groups in a daemon thread between ``start()`` and ``stop()``."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]], interval_s: float = 1.0):
        self._groups = {name: _Group(roots) for name, roots in groups.items()}
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="resources", daemon=True)
        self.samples: list[dict] = []

    def start(self) -> "ResourceSampler":
        self._thread.start()
        return self

    def stop(self) -> list[dict]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        return self.samples

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            now_ms = int(time.time() * 1000)
            for name, group in self._groups.items():
                if (row := self._sample(group)) is not None:
                    self.samples.append({"time_ms": now_ms, "process": name, **row})

    def _sample(self, group: _Group) -> dict | None:
        try:
            pids = set(group.roots())
            for pid in list(pids):
                try:
                    pids.update(c.pid for c in psutil.Process(pid).children(recursive=True))
                except psutil.NoSuchProcess:
                    pids.discard(pid)
        except Exception as err:  # a group whose process is not there (yet)
            log.debug("no processes to sample: %s", err)
            return None
        for pid in set(group.procs) - pids:
            del group.procs[pid]
        cpu = rss = 0.0
        measured = 0
        heap: list[int] = []
        for pid in pids:
            proc = group.procs.get(pid)
            try:
                if proc is None:
                    # the first cpu_percent() call only sets the baseline
                    proc = group.procs[pid] = psutil.Process(pid)
                    proc.cpu_percent(None)
                    continue
                cpu += proc.cpu_percent(None)
                rss += proc.memory_info().rss
                measured += 1
            except psutil.NoSuchProcess:
                group.procs.pop(pid, None)
                continue
            if (used := heap_used_bytes(pid)) is not None:
                heap.append(used)
        if not measured:
            return None
        return {
            "cpu_percent": round(cpu, 1),
            "rss_mb": round(rss / MB, 1),
            "heap_used_mb": round(sum(heap) / MB, 1) if heap else None,
        }


def summarise(samples: list[dict]) -> dict[str, dict[str, float | None]]:
    """Mean and max per process group and metric, for summary.json."""
    out: dict[str, dict[str, float | None]] = {}
    for name in sorted({s["process"] for s in samples}):
        rows = [s for s in samples if s["process"] == name]
        entry: dict[str, float | None] = {"samples": len(rows)}
        for metric in ("cpu_percent", "rss_mb", "heap_used_mb"):
            values = [r[metric] for r in rows if r[metric] is not None]
            entry[f"{metric}_mean"] = round(sum(values) / len(values), 1) if values else None
            entry[f"{metric}_max"] = max(values) if values else None
        out[name] = entry
    return out
