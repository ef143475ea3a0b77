"""Steps in a series of results: where its level changes, found by a test, not by eye.

A series is one figure (a stage's p50 or p99) over the history's entries, oldest first.
Its points differ from run to run by more than each run's own interval says (the host
drifts, AR(1)-like, and runs differ by a heavy-tailed factor: sd about 5 % each here), so
the test compares levels, not points. For each candidate split it takes a window of up
to :data:`WINDOW` points before and after, on a log scale (a change is a ratio), and
divides the difference of their medians by the spread a difference of medians of
windows that size has under no change; the spread is the series' own run-to-run
spread, estimated from the median absolute difference of successive points (which a
step moves only once), never below the points' own 95 % intervals. The largest such
statistic over :data:`THRESHOLD` is a step; the search repeats with windows cut at the
steps found, until no candidate passes. A window before needs :data:`MIN_BEFORE`
points, one after two, but the newest point may start a step alone (a provisional one:
the next point confirms it or not). ``benchmarks/steps_error_rate.py`` checks the false
alarms and the detection rate on series shaped like ours.
"""

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 8
"""Points compared on each side of a candidate step, at most."""
MIN_BEFORE = 3
"""Points a level needs before a step can end it."""
THRESHOLD = 4.5
"""The statistic a step must pass (a difference of medians in units of its spread):
``benchmarks/steps_error_rate.py`` finds a step in 3.5 % of flat series of 30 points
with this machine's spread, and a 30 % rise in 92 % of series."""
FLOOR_MS = 0.1
"""A latency under this is taken as this on the log scale (0 ms has no logarithm)."""
MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)
"""The sd of a median of n normal values is this times the sd of their mean."""


@dataclass(frozen=True)
class Step:
    """A change of level: ``index`` is the first point of the new level; ``before`` and
    ``after`` the medians of the windows either side; ``z`` the test's statistic;
    ``provisional`` when the new level is the newest point alone."""

    index: int
    before: float
    after: float
    z: float
    provisional: bool = False

    @property
    def change(self) -> float:
        """The new level's ratio to the old, less one: +0.2 is 20 % higher."""
        return self.after / self.before - 1 if self.before else math.inf


def _log(values: Sequence[float]) -> list[float]:
    return [math.log(max(v, FLOOR_MS)) for v in values]


def spread(values: Sequence[float], intervals: Sequence[Sequence[float] | None] = ()) -> float:
    """A point's sd on the log scale: from successive differences (1.4826 × their median
    absolute value / √2), but no less than the median of the points' own 95 % intervals'
    half-widths / 1.96, nor than 0.5 %."""
    logs = _log(values)
    diffs = [abs(b - a) for a, b in itertools.pairwise(logs)]
    found = 1.4826 * statistics.median(diffs) / math.sqrt(2) if diffs else 0.0
    own = [
        (math.log(max(hi, FLOOR_MS)) - math.log(max(lo, FLOOR_MS))) / (2 * 1.96)
        for ci in intervals
        if ci and len(ci) == 2
        for lo, hi in [ci]
    ]
    return max(found, statistics.median(own) if own else 0.0, 0.005)


def _statistic(logs: list[float], k: int, lo: int, hi: int, sd: float) -> float | None:
    """The statistic of a step at ``k`` with the windows cut at ``lo`` and ``hi``; None
    when a window is too short."""
    before, after = logs[max(lo, k - WINDOW) : k], logs[k : min(hi, k + WINDOW)]
    if len(before) < MIN_BEFORE or len(after) < (1 if k == len(logs) - 1 else 2):
        return None

    def sd_of_median(n: int) -> float:
        return sd * (1.0 if n == 1 else MEDIAN_EFFICIENCY) / math.sqrt(n)

    scale = math.hypot(sd_of_median(len(before)), sd_of_median(len(after)))
    return (statistics.median(after) - statistics.median(before)) / scale


def find_steps(
    values: Sequence[float],
    intervals: Sequence[Sequence[float] | None] = (),
    threshold: float = THRESHOLD,
) -> list[Step]:
    """The steps of a series, oldest first."""
    logs, sd = _log(values), spread(values, intervals)
    cuts: list[int] = []
    while True:
        passing = {}
        for k in range(MIN_BEFORE, len(logs)):
            lo, hi = _bounds(cuts, k, len(logs))
            z = None if k == lo else _statistic(logs, k, lo, hi, sd)
            if z is not None and abs(z) >= threshold:
                passing[k] = z
        if not passing:
            break
        cuts.append(_locate(logs, passing, cuts))
    return [_step(values, sorted(cuts), i, sd) for i in range(len(cuts))]


def _bounds(cuts: list[int], k: int, length: int) -> tuple[int, int]:
    """The level a candidate at ``k`` may split: from the last cut up to ``k`` to the next."""
    return max([0, *(c for c in cuts if c <= k)]), min([length, *(c for c in cuts if c > k)])


def _locate(logs: list[float], passing: dict[int, float], cuts: list[int]) -> int:
    """Where the strongest candidate's step is: windows of medians pass the test for a few
    points either side of a step, so among the passing candidates of its sign near it,
    the split that leaves the least absolute deviation from each side's median."""
    best = max(passing, key=lambda k: abs(passing[k]))
    lo, hi = _bounds(cuts, best, len(logs))
    a, b = max(lo, best - WINDOW), min(hi, best + WINDOW)
    near = [k for k, z in passing.items() if a < k < b and (z > 0) == (passing[best] > 0)]

    def deviation(part: list[float]) -> float:
        middle = statistics.median(part)
        return sum(abs(x - middle) for x in part)

    return min(near, key=lambda k: (deviation(logs[a:k]) + deviation(logs[k:b]), k))


def _step(values: Sequence[float], cuts: list[int], i: int, sd: float) -> Step:
    """The i-th of the steps at ``cuts``, its levels and statistic on the final cuts."""
    k, logs = cuts[i], _log(values)
    lo, hi = ([0, *cuts][i], [*cuts, len(values)][i + 1])
    before = statistics.median(values[max(lo, k - WINDOW) : k])
    after = statistics.median(values[k : min(hi, k + WINDOW)])
    z = _statistic(logs, k, lo, hi, sd) or 0.0
    return Step(k, before, after, z, provisional=k == len(values) - 1)


def worse_level(steps: Sequence[Step], length: int, tolerance: float) -> Step | None:
    """The step that put the newest of ``length`` points on a level higher (worse, for a
    latency) than the one before by more than ``tolerance`` (0.1: 10 %), if it is among
    the last :data:`WINDOW` points; None otherwise. A level that old is the series' own:
    a change that was meant is accepted by leaving it be, or by ``--since``."""
    if not steps:
        return None
    last = steps[-1]
    return last if last.index >= length - WINDOW and last.change > tolerance else None
