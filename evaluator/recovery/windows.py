"""Each disturbance window of a run judged: how long latency stays inflated after it.

Pure functions on the per-second series (:func:`evaluator.statistics.stats.timeseries`) and
disturbance windows in broker time (the periodic burst's bursts, a fault's
outage), so bursts and faults are judged by one measure (docs/method.md#recovery).
Per window:

- **baseline**: the median per-second p50 over the ``baseline_s`` before the
  window starts, leaving out seconds without outputs, seconds that overlap any
  window and seconds an earlier window was still recovering in (from its start to
  its recovery, or to the end of its search when it never recovered): bursts that
  follow each other closely are each judged against the undisturbed level, not
  against the last one's tail. With fewer than :data:`MIN_BASELINE_SECONDS` such
  seconds it is the previous window's baseline (the last undisturbed level), and
  None for a first window.
- **recovery**: counted from the window's *end*, because the window's own length
  is imposed (the burst's spread, the outage) while what follows it is the
  system's doing; from the start it is ``recovery_s`` plus the window's length.
  The p50 is back when it is at most ``(1 + threshold) ×`` the baseline (lower is
  not inflated) in :data:`HOLD_S` seconds with outputs in a row, so one lucky
  second does not count; the recovery is the start of the first of them. Seconds
  without outputs carry no latency to judge: they neither count nor break the run
  (a stall that delays records shows in the late outputs' latency). Only seconds
  wholly before the next window start are searched; not found there is
  ``recovered: false``, and without a baseline ``recovered`` is None (unknown).
- **peak**: the largest per-second p50 from the window's start to the recovery
  (or to the end of the search when it never recovers).
- **first output after**: from the window's end to the first second with outputs.
- **settled**: the latency may come back to another level than before (a restarted
  JVM running cold, a rebalance that left the partitions elsewhere), where "not
  recovered" would read as "never came back". The stretch from a second to the end of
  the search (the next window's start, or the end of the measured period) is settled
  when its span cut into :data:`~evaluator.config.SETTLE_WINDOWS` windows gives medians
  that agree within ``threshold`` (the warm-up's settle rule,
  :func:`evaluator.statistics.steady.settled_throughout`, at the recovery's own precision: a
  level is told apart from the one before to ``threshold``, so it is resolved to that
  too), and its first :data:`HOLD_S` seconds
  with outputs lie within ``threshold`` of its median; the first such second is where
  the latency settled, and the stretch's median, with its interval
  (:func:`evaluator.statistics.steady.level`), is the new **level**. Its **offset** from the
  baseline is level / baseline − 1, with the interval of a ratio (MOVER,
  :func:`evaluator.statistics.significance.ratio_mover`) of the two medians' intervals. The level
  is a new one when the offset's interval lies wholly beyond ``threshold`` (the
  latency shown to be elsewhere, recovered or not), or when the latency did not
  recover and the offset is beyond ``threshold``; otherwise it is the one before when
  the offset is within ``threshold``, else undetermined (recovered, and not shown to
  be elsewhere). The time to a level that is not new is the recovery's, so the two
  figures agree. ``settled`` is None when the search holds too few seconds with outputs to
  tell (fewer than ``SETTLE_WINDOWS × MIN_POINTS``), False when none of its stretches
  settles (the latency still climbs or falls).
- **cause**: for a fault of one process (``Window.process``: the broker, the engine),
  that process's mean CPU (% of a core) and garbage-collection time (ms a second)
  over the baseline's seconds and over the settled stretch, from the run's
  resources.csv: a restarted JVM that runs cold shows here beside its latency.

The series has one row per broker second, so every time here is exact to a
second: a second [s, s + 1) counts as after the window when it ends after it.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

import numpy as np
import pandas as pd

from evaluator.config import MIN_BASELINE_SECONDS, SETTLE_WINDOWS
from evaluator.statistics.significance import ratio_mover
from evaluator.statistics.steady import MIN_POINTS, level, settled_throughout
from ground.contract import SECOND_MS
from ground.errors import EvaluationError

HOLD_S = 3
"""Seconds with outputs in a row within the bound that make a recovery."""

BY_OUTPUT: Final = "p50 of the outputs appended in each second"
BY_INPUT: Final = "p99 of the outputs whose latest input was appended in each second"
"""The per-second series a recovery is judged on: every window's but a partial fault's,
and a partial fault's, whose inputs that waited show in their own seconds' p99 even while
the outputs of the others are on time."""


@dataclass(frozen=True)
class Window:
    """A disturbance in broker time, epoch ms from ``start_ms`` up to ``end_ms`` (as a
    burst's pairs are due; equal: an instant); ``kind`` names it (``burst``, a fault);
    ``process`` the process group a fault stopped or killed (``broker``, ``engine``, as
    resources.csv names them), None for a burst."""

    kind: str
    start_ms: int
    end_ms: int
    process: str | None = None
    partial: bool = False
    """The fault stopped a part of the job (one instance of several: ``instance-loss``):
    the rest writes on, so while the lost part's inputs wait, a second's outputs are the
    rest's and look recovered; such a window is judged on :data:`BY_INPUT` instead."""

    def __post_init__(self) -> None:
        if self.end_ms < self.start_ms:
            raise EvaluationError(
                f"disturbance window {self.kind!r} ends ({self.end_ms}) before it starts "
                f"({self.start_ms})"
            )

    def overlaps(self, begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Which of the intervals [begins, ends) (ms) share time with this window."""
        return (begins < max(self.end_ms, self.start_ms + 1)) & (ends > self.start_ms)


@dataclass(frozen=True)
class Settled:
    """Where the latency settled after a window: ``after_s`` from the window's end, at the
    median ``p50_ms`` with its 95 % interval; ``offset`` = level / baseline − 1 with its
    interval (None without a baseline); ``level`` "before", "new" or "undetermined" (see
    the module), None without a baseline."""

    after_s: float
    p50_ms: float
    p50_ci95: tuple[float, float]
    offset: float | None
    offset_ci95: tuple[float, float] | None
    level: str | None


@dataclass(frozen=True)
class Usage:
    """The disturbed process's mean CPU (% of one core) and GC time (ms a second) over the
    baseline's span (``before``) and the settled stretch (``after``); None where no sample
    fell in a span."""

    process: str
    cpu_percent: tuple[float | None, float | None]
    gc_ms_per_s: tuple[float | None, float | None]


@dataclass(frozen=True)
class Recovery:
    """One window's recovery; times in seconds, latencies in ms (see the module)."""

    window: Window
    baseline_p50_ms: float | None
    peak_ms: float | None
    first_output_after_s: float | None
    recovery_s: float | None
    recovered: bool | None
    baseline_p50_ci95: tuple[float, float] | None = None
    settled: bool | None = None
    steady_level: Settled | None = None
    cause: Usage | None = None

    def as_dict(self) -> dict[str, Any]:
        """summary.json's entry of the window: the window's keys, then the figures, the
        settled level's flattened as ``settled_s``, ``settled_p50_ms``, ``offset``, …"""
        data = _lists(asdict(self))
        settled = data.pop("steady_level") or dict.fromkeys(f.name for f in fields(Settled))
        return {
            **data.pop("window"),
            **data,
            "settled_s": settled["after_s"],
            "settled_p50_ms": settled["p50_ms"],
            "settled_p50_ci95": settled["p50_ci95"],
            "offset": settled["offset"],
            "offset_ci95": settled["offset_ci95"],
            "level": settled["level"],
        }


def _lists(data: Any) -> Any:
    """Tuples as JSON has them, lists, so a section compares equal to its file read back."""
    if isinstance(data, dict):
        return {k: _lists(v) for k, v in data.items()}
    if isinstance(data, tuple | list):
        return [_lists(v) for v in data]
    return data


def recoveries(
    series: pd.DataFrame,
    windows: Sequence[Window],
    baseline_s: float,
    threshold: float,
    until_ms: int | None = None,
    usage: pd.DataFrame | None = None,
    column: str = "latency_p50_ms",
) -> list[Recovery]:
    """Each window's recovery, in the order of their starts, judged on ``series``'
    ``column`` (its p50 by default, "p50" in the names of the figures).

    ``series``: columns ``second`` (epoch s, consecutive), ``output_count`` and
    ``latency_p50_ms`` (NaN in seconds without outputs), as
    :func:`evaluator.statistics.stats.timeseries` returns them. ``until_ms``: where a settled
    level's stretch ends at the latest (the measured period's end; None: the series').
    ``usage``: resources.csv's rows (``time_ms``, ``process``, ``cpu_percent``,
    ``gc_ms_per_s``), for the cause of a fault of one process.
    """
    seconds = series["second"].to_numpy(np.int64)
    p50 = series[column].to_numpy(np.float64)
    has_output = (series["output_count"].to_numpy() > 0) & ~np.isnan(p50)
    begins, ends = seconds * SECOND_MS, (seconds + 1) * SECOND_MS
    ordered = sorted(windows, key=lambda w: (w.start_ms, w.end_ms))
    disturbed = np.zeros(len(seconds), bool)
    for w in ordered:
        disturbed |= w.overlaps(begins, ends)
    result: list[Recovery] = []
    index = np.arange(len(seconds))
    for i, w in enumerate(ordered):
        horizon = ordered[i + 1].start_ms if i + 1 < len(ordered) else None
        before = (begins >= w.start_ms - baseline_s * SECOND_MS) & (ends <= w.start_ms)
        quiet = before & has_output & ~disturbed
        baseline = _median(p50[quiet])
        baseline_ci = _interval(seconds[quiet], p50[quiet]) if baseline is not None else None
        if baseline is None and result:
            baseline, baseline_ci = result[-1].baseline_p50_ms, result[-1].baseline_p50_ci95
        after = ends > w.end_ms
        searched = after if horizon is None else after & (ends <= horizon)
        back = _recovered_at(p50, has_output & searched, baseline, threshold)
        upto = back if back is not None else _last(w.overlaps(begins, ends) | searched)
        span = (ends > w.start_ms) & (index <= (-1 if upto is None else upto))
        # still disturbed for the next windows' baselines: up to the recovery (exclusive)
        disturbed |= span & ((index < back) if back is not None else True)
        peak = p50[span & has_output]
        first = _first(after & has_output)
        recovery_s = None if back is None else _since(begins[back], w.end_ms)
        stretch = has_output & searched & ((ends <= until_ms) if until_ms is not None else True)
        settled, at = _settled_from(seconds, p50, stretch, threshold)
        found = None
        if at is not None:
            found = _level(
                seconds[stretch & (index >= at)], p50[stretch & (index >= at)],
                _since(begins[at], w.end_ms), recovery_s, baseline, baseline_ci, threshold,
            )  # fmt: skip
        result.append(
            Recovery(
                window=w,
                baseline_p50_ms=baseline,
                peak_ms=float(peak.max()) if peak.size else None,
                first_output_after_s=None if first is None else _since(begins[first], w.end_ms),
                recovery_s=recovery_s,
                recovered=None if baseline is None else back is not None,
                baseline_p50_ci95=baseline_ci,
                settled=settled,
                steady_level=found,
                cause=_cause(usage, w, baseline_s, found, ends[stretch]),
            )
        )
    return result


def _settled_from(
    seconds: np.ndarray, p50: np.ndarray, stretch: np.ndarray, threshold: float
) -> tuple[bool | None, int | None]:
    """(settled, index of the second it settled at): the first second of ``stretch``
    from which the rest of it is settled (see the module); (None, None) when the
    stretch is too short to tell, (False, None) when no part of it settles."""
    candidates = np.flatnonzero(stretch)
    if candidates.size < SETTLE_WINDOWS * MIN_POINTS:
        return None, None
    for k in range(candidates.size - SETTLE_WINDOWS * MIN_POINTS + 1):
        rest = candidates[k:]
        if not settled_throughout(seconds[rest], p50[rest], threshold):
            continue
        median = float(np.median(p50[rest]))
        if np.all(np.abs(p50[rest[:HOLD_S]] - median) <= threshold * median):
            return True, int(rest[0])
    return False, None


def _level(
    seconds: np.ndarray,
    p50: np.ndarray,
    after_s: float,
    recovery_s: float | None,
    baseline: float | None,
    baseline_ci: tuple[float, float] | None,
    threshold: float,
) -> Settled:
    """The settled stretch's level, its offset from the baseline and which level it is
    (see the module); the time to it is the recovery's when it is the level before and the
    latency recovered."""
    found = level(seconds, p50)
    offset, offset_ci, kind = None, None, None
    if baseline is not None and baseline > 0:
        offset = round(found.median_ms / baseline - 1, 4)
        if baseline_ci is not None:
            ratio = ratio_mover((found.median_ms, *found.ci95), (baseline, *baseline_ci))
            offset_ci = None if ratio is None else (round(ratio[1] - 1, 4), round(ratio[2] - 1, 4))
        # beyond the threshold wholly (or, without an interval, at all), or not back at all
        low, high = offset_ci or (offset, offset)
        if low > threshold or high < -threshold or (recovery_s is None and abs(offset) > threshold):
            kind = "new"
        else:
            kind = "before" if abs(offset) <= threshold else "undetermined"
    if kind != "new" and recovery_s is not None:
        after_s = recovery_s
    return Settled(after_s, found.median_ms, found.ci95, offset, offset_ci, kind)


def _interval(seconds: np.ndarray, p50: np.ndarray) -> tuple[float, float]:
    """The 95 % interval of a baseline's median."""
    return level(seconds, p50).ci95


def _cause(
    usage: pd.DataFrame | None,
    w: Window,
    baseline_s: float,
    found: Settled | None,
    stretch_ends_ms: np.ndarray,
) -> Usage | None:
    """The disturbed process's CPU and GC before the window and over the settled stretch
    (None for a burst, without samples or without a settled level)."""
    if usage is None or w.process is None or found is None or not stretch_ends_ms.size:
        return None
    rows = usage[usage["process"] == w.process]
    spans = (
        (w.start_ms - baseline_s * SECOND_MS, w.start_ms),
        (w.end_ms + found.after_s * SECOND_MS, float(stretch_ends_ms[-1])),
    )

    def mean(column: str, lo: float, hi: float) -> float | None:
        # a sample describes the second before its time
        values = rows.loc[(rows["time_ms"] > lo) & (rows["time_ms"] <= hi), column].dropna()
        return round(float(values.mean()), 1) if len(values) else None

    cpu, gc = ((mean(c, *spans[0]), mean(c, *spans[1])) for c in ("cpu_percent", "gc_ms_per_s"))
    return Usage(w.process, cpu_percent=cpu, gc_ms_per_s=gc)


def _median(p50: np.ndarray) -> float | None:
    """The baseline: None from fewer than :data:`MIN_BASELINE_SECONDS` seconds."""
    return float(np.median(p50)) if p50.size >= MIN_BASELINE_SECONDS else None


def _recovered_at(
    p50: np.ndarray, candidates: np.ndarray, baseline: float | None, threshold: float
) -> int | None:
    """Index of the first of :data:`HOLD_S` candidate seconds in a row within the bound."""
    if baseline is None:
        return None
    bound = baseline * (1 + threshold)
    run_start, run = 0, 0
    for i in np.flatnonzero(candidates):
        if p50[i] <= bound:
            run_start = int(i) if run == 0 else run_start
            run += 1
            if run == HOLD_S:
                return run_start
        else:
            run = 0
    return None


def _first(mask: np.ndarray) -> int | None:
    found = np.flatnonzero(mask)
    return int(found[0]) if found.size else None


def _last(mask: np.ndarray) -> int | None:
    found = np.flatnonzero(mask)
    return int(found[-1]) if found.size else None


def _since(second_ms: int, end_ms: int) -> float:
    """Seconds from ``end_ms`` to a second's start; 0 for the second holding the end."""
    return max(0, int(second_ms) - end_ms) / SECOND_MS
