"""The machine's pace: how long one core takes for a fixed piece of work, before and after a run.

CPU steal shows only the time a hypervisor takes from this virtual machine. A
neighbour's use of the shared caches and memory bandwidth, or the host's clock
frequency, slow every process here without showing in any CPU counter
(docs/method.md#the-hosts-pace). So each run times a fixed piece of work on one core
before the job starts (only an idle broker running) and after it stops: the two figures
say whether the host kept its speed through the run, and comparing them across runs
says whether two runs were made on an equally fast host.

The work is a loop of Python bytecode (branches, calls, small objects, which
is what a JVM's per-batch planning does too) and a copy of 32 MiB between two
buffers allocated once (memory bandwidth, no page faults). It runs once
untimed, then :data:`REPEATS` times with :data:`GAP_S` between them, and the
fastest timing is the host's pace: interruptions only ever lengthen a timing,
and the gaps spread the repeats over about a second, so that one burst of
other work (a process ending, a broker's housekeeping) cannot lengthen them all.
Python's cyclic garbage collector is off while it runs, as in :mod:`timeit`,
so that no collection of the runner's heap lands in a timing. The buffers are allocated
once: page faults in a timing would measure the kernel, not the host.
"""

import functools
import gc
import time
from collections.abc import Callable
from typing import TypedDict

REPEATS = 7
GAP_S = 0.1
LOOP = 200_000
COPY_BYTES = 32 * 1024 * 1024
CHANGE_WARN = 0.15
"""Warn when a run's pace after it differs from its pace before by more than this share:
a smaller change lies within the timing's own noise on an idle machine (the pace before
and after of each stored run in docs/reference-data/ shows its size). Across the runs of
a comparison the spread is a median absolute deviation instead, set beside each
increment it could explain (evaluator.statistics.significance.pace_spread)."""


class Pace(TypedDict):
    """summary.json's ``machine.pace``: the fixed piece of work's ms before and after the
    run, their :func:`change`, and what the work is."""

    before_ms: float | None
    after_ms: float | None
    change: float | None
    work: str


@functools.cache
def _buffers() -> tuple[bytearray, bytearray]:
    """The copy's source and target, allocated at the first timing, not at import: every
    command that imports the runner would otherwise carry 64 MiB."""
    return bytearray(COPY_BYTES), bytearray(COPY_BYTES)


def work() -> None:
    """The fixed piece of work: ~30 ms of interpreter loop and a 32 MiB copy."""
    total = 0
    for i in range(LOOP):
        total += (i * 7) % 13 if i & 1 else len(str(i))
    source, target = _buffers()
    target[:] = source


def measure(
    repeats: int = REPEATS,
    task: Callable[[], None] = work,
    clock: Callable[[], float] = time.perf_counter,
    pause: Callable[[float], None] = time.sleep,
) -> float:
    """The fastest of ``repeats`` timings of ``task`` after one untimed run, ms."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        task()
        timings = []
        for _ in range(repeats):
            pause(GAP_S)
            t0 = clock()
            task()
            timings.append(clock() - t0)
    finally:
        if collecting:
            gc.enable()
    return round(min(timings) * 1000, 2)


def change(before_ms: float | None, after_ms: float | None) -> float | None:
    """(after − before) / before: positive when the host got slower during the run."""
    if not before_ms or after_ms is None:
        return None
    return round(after_ms / before_ms - 1, 4)


def section(before_ms: float | None, after_ms: float | None) -> Pace:
    """summary.json's ``machine.pace``."""
    return Pace(
        before_ms=before_ms,
        after_ms=after_ms,
        change=change(before_ms, after_ms),
        work=f"fastest of {REPEATS}: a {LOOP:,}-step Python loop and a "
        f"{COPY_BYTES // 2**20} MiB copy on one core",
    )


def run_warnings(pace: Pace | None) -> list[str]:
    """A run whose host changed speed between its start and its end."""
    if pace is None or (moved := pace["change"]) is None or abs(moved) <= CHANGE_WARN:
        return []
    before, after = pace["before_ms"], pace["after_ms"]
    return [
        f"the machine's pace changed during the run: a fixed piece of work took {before:g} ms "
        f"on one core before it and {after:g} ms after ({moved * 100:+.0f} %, warn beyond "
        f"±{CHANGE_WARN * 100:.0f} %): the host's speed moved under the measurement"
    ]
