"""CPU and memory of the run's processes and of the whole machine, sampled every second.

A sampler thread watches named process groups (``engine``: the Spark job's
process and all its children; ``broker``: the Kafka JVM when it runs here;
``bench``: the runner process alone). Each sample records, per group, CPU %
(of one core, summed over the group's processes), resident memory, JVM
heap in use, the milliseconds per second the JVMs' garbage collectors ran
(from the JVMs' hsperfdata, where available), and the CPU % and name of the group's
busiest thread (``thread_max_pct``, ``thread_max_name``: one thread at 100 % is a
bottleneck however many cores are idle). At the same
instant it records the machine's CPU (row ``machine``) and the CPU that
processes outside every group used (row ``outside``), so a run can say
whether the machine itself was the bottleneck (:mod:`stagebench.resources.summary`).

All CPU figures are in % of one core: 200 is two cores fully busy.

- **Busy** CPU is total − idle − iowait (what psutil calls busy). iowait is
  idle time while a disk read is pending: the core was free to run anything.
  Steal, the time the hypervisor gave the virtual CPU to someone else while
  it had work, counts as busy: the run could not use that time either.
- ``cpu_user`` is user + nice, ``cpu_system`` system + irq + softirq (Linux
  names), so busy = cpu_user + cpu_system + cpu_steal. Machine CPU comes from
  deltas of ``psutil.cpu_times()``, not ``psutil.cpu_percent()``, whose
  baseline is global to the process and reset by any other caller.
- **Outside** = machine busy − the groups' CPU (each pid once), clamped at 0.
  Per-process and machine CPU are read microseconds to milliseconds apart
  over intervals of the same length. A child that starts and ends between two
  rounds (the Spark JVM runs short commands such as ``rm -rf``, about 15 % of
  a core) is never seen; a recursive group counts it from its parent's
  children times when the parent reaps it, less what the group's own ended
  processes had used. A process that ends within a second and whose parent is
  not in its group takes that second's CPU with it (outside). A sample in
  which a group found an older process it had not seen before has no
  ``outside`` row (that process's CPU of the second is unknown).
- The machine is whatever ``/proc/stat`` describes: in a container, the host;
  a CPU quota of the container is not seen.

A row describes the ``interval_s`` before its ``time_ms`` (this machine's
wall clock).
"""

import csv
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import psutil

from ground import files
from ground.jvm.heap import jvm_counters

log = logging.getLogger(__name__)

MB = 1024 * 1024

MACHINE: Final = "machine"
OUTSIDE: Final = "outside"
CSV_FIELDS: Final = (
    "time_ms",
    "process",
    "cpu_percent",
    "rss_mb",
    "heap_used_mb",
    "gc_ms_per_s",
    "thread_max_pct",
    "thread_max_name",
    "cpu_user",
    "cpu_system",
    "cpu_iowait",
    "cpu_steal",
)
"""Columns of resources.csv; the last four only in ``machine`` rows."""
_NO_PROCESS: Final = {
    "rss_mb": None,
    "heap_used_mb": None,
    "gc_ms_per_s": None,
    "thread_max_pct": None,
    "thread_max_name": None,
}
"""The columns of one process group, empty in the ``machine`` and ``outside`` rows."""

_USER = ("user", "nice")
_SYSTEM = ("system", "irq", "softirq", "interrupt", "dpc")  # Linux and Windows names
_GUEST = ("guest", "guest_nice")  # on Linux already inside user and nice
_NOT_BUSY = ("idle", "iowait")


@dataclass(frozen=True)
class Group:
    """Processes sampled together: the root pids and, if ``recursive``, all their descendants."""

    roots: Callable[[], list[int]]
    recursive: bool = True


@dataclass
class _Tracked:
    group: Group
    procs: dict[int, psutil.Process] = field(default_factory=dict)
    # per pid, its CPU seconds at the last round: its own, and its reaped children's
    seen: dict[int, tuple[float, float]] = field(default_factory=dict)
    # CPU seconds of ended processes not yet found in their parent's children times
    unreaped_s: float = 0.0
    # per JVM pid, the seconds its collectors had run at the last round
    gc_s: dict[int, float] = field(default_factory=dict)
    # per pid, each of its threads' CPU seconds at the last round, by thread id
    thread_s: dict[int, dict[int, float]] = field(default_factory=dict)


@dataclass
class _Usage:
    row: dict[str, Any] | None  # None when no process of the group was measured
    cpu_by_pid: dict[int, float]
    complete: bool  # every process's CPU of the interval is known
    reaped: float = 0.0  # CPU % of children that came and went between two rounds


class _MachineCpu:
    """Busy, user, system, iowait and steal CPU of the whole machine between two reads."""

    def __init__(self) -> None:
        self.cores = psutil.cpu_count() or 1
        self._last: Any = None

    def read(self) -> dict[str, float] | None:
        now = psutil.cpu_times()
        last, self._last = self._last, now
        if last is None:
            return None
        # counters such as iowait can step backwards on Linux: clamp, as psutil does
        delta: dict[str, float] = {
            name: max(0.0, getattr(now, name) - getattr(last, name)) for name in now._fields
        }
        total = sum(delta.values()) - sum(delta.get(name, 0.0) for name in _GUEST)
        if total <= 0:
            return None
        scale = 100.0 * self.cores / total

        def pct(names: tuple[str, ...]) -> float:
            return round(sum(delta.get(name, 0.0) for name in names) * scale, 1)

        busy = total - sum(delta.get(name, 0.0) for name in _NOT_BUSY)
        return {
            "cpu_percent": round(busy * scale, 1),
            "cpu_user": pct(_USER),
            "cpu_system": pct(_SYSTEM),
            "cpu_iowait": pct(("iowait",)),
            "cpu_steal": pct(("steal",)),
        }


class ResourceSampler:
    """Samples process groups and the machine in a daemon thread between ``start()`` and ``stop()``.

    A group given as a bare function of root pids is ``Group(roots)`` (recursive).
    ``cpu_s`` is the CPU time the sampler thread itself has used so far.
    """

    def __init__(
        self, groups: Mapping[str, Group | Callable[[], list[int]]], interval_s: float = 1.0
    ):
        if reserved := {MACHINE, OUTSIDE} & set(groups):
            raise ValueError(f"group names {sorted(reserved)} are reserved for machine rows")
        self._groups = {
            name: _Tracked(group if isinstance(group, Group) else Group(group))
            for name, group in groups.items()
        }
        self._interval = interval_s
        self._machine = _MachineCpu()
        self._last_s: float | None = None
        self._listed: set[int] | None = None  # every pid of the machine at the last round
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="resources", daemon=True)
        self.cores = self._machine.cores
        self.cpu_s = 0.0
        self.samples: list[dict[str, Any]] = []

    def start(self) -> "ResourceSampler":
        self._thread.start()
        return self

    def stop(self) -> list[dict[str, Any]]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        return self.samples

    def _loop(self) -> None:
        # the first round only sets the baselines (process and machine CPU) and yields no rows
        while True:
            self.samples.extend(self._take())
            self.cpu_s = time.thread_time()
            if self._stop.wait(self._interval):
                return

    def _take(self) -> list[dict[str, Any]]:
        now_s = time.time()
        now_ms = int(now_s * 1000)
        listed = set(psutil.pids())
        machine = self._machine.read()
        rows: list[dict[str, Any]] = []
        run_cpu: dict[int, float] = {}
        reaped = 0.0
        complete = True
        for name, tracked in self._groups.items():
            usage = self._sample(tracked, now_s)
            if usage.row is not None:
                rows.append({"time_ms": now_ms, "process": name, **usage.row})
            run_cpu.update(usage.cpu_by_pid)
            reaped += usage.reaped
            complete = complete and usage.complete
        if machine is not None:
            rows.append({"time_ms": now_ms, "process": MACHINE, **machine, **_NO_PROCESS})
            if complete:
                outside = max(0.0, machine["cpu_percent"] - sum(run_cpu.values()) - reaped)
                rows.append({"time_ms": now_ms, "process": OUTSIDE,
                             "cpu_percent": round(outside, 1), **_NO_PROCESS})  # fmt: skip
        self._last_s, self._listed = now_s, listed
        return rows

    def _pids(self, group: Group) -> set[int]:
        pids = set(group.roots())
        for pid in list(pids):
            try:
                proc = psutil.Process(pid)
                if group.recursive:
                    pids.update(c.pid for c in proc.children(recursive=True))
            except psutil.NoSuchProcess:
                pids.discard(pid)
        return pids

    def _sample(self, tracked: _Tracked, now_s: float) -> _Usage:
        try:
            pids = self._pids(tracked.group)
        except Exception as err:  # a group whose process is not there (yet)
            log.debug("no processes to sample: %s", err)
            return _Usage(None, {}, True)
        for pid in set(tracked.procs) - pids:
            del tracked.procs[pid]
        for pid in set(tracked.gc_s) - pids:
            del tracked.gc_s[pid]
        for pid in set(tracked.thread_s) - pids:
            del tracked.thread_s[pid]
        busiest: tuple[float, int, int] | None = None  # (CPU %, pid, thread id)
        # CPU that processes of the group had used when they were last seen and then ended
        ended = sum(sum(tracked.seen.pop(pid)) for pid in set(tracked.seen) - pids)
        cpu_by_pid: dict[int, float] = {}
        complete = True
        rss = 0.0
        heap: list[int] = []
        gc_s: list[float] = []  # seconds the JVMs' collectors ran since the last round
        reaped_s = 0.0
        for pid in pids:
            proc = tracked.procs.get(pid)
            try:
                if proc is None:
                    proc = tracked.procs[pid] = psutil.Process(pid)
                    cpu = self._first_cpu(proc, now_s)
                    proc.cpu_percent(None)  # the baseline for the next round
                    if cpu is None:
                        complete = False
                        tracked.seen[pid] = _cpu_seconds(proc)
                        continue
                else:
                    cpu = proc.cpu_percent(None)
                rss += proc.memory_info().rss
                own, children = _cpu_seconds(proc)
                busiest = max(busiest or (-1.0, 0, 0), self._busiest_thread(tracked, proc, now_s))
            except psutil.Error:  # gone, or not ours to read
                tracked.procs.pop(pid, None)
                if pid in tracked.seen:  # ended this round: its parent may have reaped it
                    ended += sum(tracked.seen.pop(pid))
                continue
            if pid in tracked.seen and tracked.group.recursive:
                reaped_s += children - tracked.seen[pid][1]
            tracked.seen[pid] = (own, children)
            cpu_by_pid[pid] = cpu
            if (jvm := jvm_counters(pid)) is not None:
                heap.append(jvm.heap_used)
                if jvm.gc_s is not None:
                    if pid in tracked.gc_s:
                        gc_s.append(jvm.gc_s - tracked.gc_s[pid])
                    tracked.gc_s[pid] = jvm.gc_s
        if not cpu_by_pid:
            return _Usage(None, {}, complete)
        # Children that started and ended between two rounds (the JVM runs short commands
        # such as ``rm -rf``) are never seen; their CPU reaches their parent's children
        # times when they are reaped. Less what the group's own ended processes had used,
        # which a parent's children times now also hold. Only in a recursive group: the
        # children of a group of single processes (the runner's: the job) are not its own.
        reaped = 0.0
        if tracked.group.recursive:
            # an ended process shows in its parent's children times this round or the next
            extra_s = reaped_s - tracked.unreaped_s - ended
            tracked.unreaped_s = max(0.0, -extra_s)
            if self._last_s is not None and extra_s > 0:
                reaped = 100.0 * extra_s / max(now_s - self._last_s, 1e-3)
        gc_ms_per_s = None
        if gc_s and self._last_s is not None:
            gc_ms_per_s = round(1000.0 * sum(gc_s) / max(now_s - self._last_s, 1e-3), 1)
        row = {
            "cpu_percent": round(sum(cpu_by_pid.values()) + reaped, 1),
            "rss_mb": round(rss / MB, 1),
            "heap_used_mb": round(sum(heap) / MB, 1) if heap else None,
            "gc_ms_per_s": gc_ms_per_s,
            **_thread_columns(busiest),
        }
        return _Usage(row, cpu_by_pid, complete, reaped)

    def _busiest_thread(
        self, tracked: _Tracked, proc: psutil.Process, now_s: float
    ) -> tuple[float, int, int]:
        """The CPU % of ``proc``'s busiest thread since the last round (-1 when no thread
        of it was seen then), with its pid and thread id; updates the threads' baselines."""
        best = (-1.0, proc.pid, 0)
        elapsed = max(now_s - (self._last_s or now_s), 1e-3)
        before = tracked.thread_s.get(proc.pid, {})
        now = {t.id: t.user_time + t.system_time for t in proc.threads()}
        for tid, used in now.items():
            if (last := before.get(tid)) is not None:
                best = max(best, (100.0 * max(0.0, used - last) / elapsed, proc.pid, tid))
        tracked.thread_s[proc.pid] = now
        return best

    def _first_cpu(self, proc: psutil.Process, now_s: float) -> float | None:
        """CPU % since the last round of a process seen for the first time, None if unknown.

        A process that did not exist at the last round spent all its CPU time
        in this interval; of an older one only the total since its start is
        known. (``create_time()`` cannot tell: on Linux it is off by up to a
        second, boot time being rounded to whole seconds.)
        """
        if self._last_s is None or self._listed is None or proc.pid in self._listed:
            return None
        times = proc.cpu_times()
        return 100.0 * (times.user + times.system) / max(now_s - self._last_s, 1e-3)


def _thread_columns(busiest: tuple[float, int, int] | None) -> dict[str, Any]:
    """``thread_max_pct`` and ``thread_max_name`` of a group's busiest thread: the name the
    thread gave itself (a JVM's: the first 15 characters of the Java thread's), None when
    none was measured over the whole interval."""
    if busiest is None or busiest[0] < 0:
        return {"thread_max_pct": None, "thread_max_name": None}
    pct, pid, tid = busiest
    try:
        name: str | None = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
    except OSError:  # ended, or not Linux
        name = None
    return {"thread_max_pct": round(pct, 1), "thread_max_name": name}


def _cpu_seconds(proc: psutil.Process) -> tuple[float, float]:
    """CPU seconds of ``proc`` itself, and of its children it has reaped."""
    t = proc.cpu_times()
    return t.user + t.system, t.children_user + t.children_system


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """The samples as resources.csv (``CSV_FIELDS``)."""
    with files.replacing(path) as out:
        writer = csv.DictWriter(out, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
