"""Recovery after a disturbance: how long latency stays inflated after a burst or a fault.

Pure functions on the per-second series (:func:`evaluator.stats.timeseries`) and
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

The series has one row per broker second, so every time here is exact to a
second: a second [s, s + 1) counts as after the window when it ends after it.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.config import MIN_BASELINE_SECONDS
from ground.contract import SECOND_MS
from ground.errors import EvaluationError

HOLD_S = 3
"""Seconds with outputs in a row within the bound that make a recovery."""


@dataclass(frozen=True)
class Window:
    """A disturbance in broker time, epoch ms from ``start_ms`` up to ``end_ms`` (as a
    burst's pairs are due; equal: an instant); ``kind`` names it (``burst``, a fault)."""

    kind: str
    start_ms: int
    end_ms: int

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
class Recovery:
    """One window's recovery; times in seconds, latencies in ms (see the module)."""

    window: Window
    baseline_p50_ms: float | None
    peak_ms: float | None
    first_output_after_s: float | None
    recovery_s: float | None
    recovered: bool | None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {**data.pop("window"), **data}


def recoveries(
    series: pd.DataFrame, windows: Sequence[Window], baseline_s: float, threshold: float
) -> list[Recovery]:
    """Each window's recovery, in the order of their starts.

    ``series``: columns ``second`` (epoch s, consecutive), ``output_count`` and
    ``latency_p50_ms`` (NaN in seconds without outputs), as
    :func:`evaluator.stats.timeseries` returns them.
    """
    seconds = series["second"].to_numpy(np.int64)
    p50 = series["latency_p50_ms"].to_numpy(np.float64)
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
        baseline = _median(p50[before & has_output & ~disturbed])
        if baseline is None and result:
            baseline = result[-1].baseline_p50_ms
        after = ends > w.end_ms
        searched = after if horizon is None else after & (ends <= horizon)
        back = _recovered_at(p50, has_output & searched, baseline, threshold)
        upto = back if back is not None else _last(w.overlaps(begins, ends) | searched)
        span = (ends > w.start_ms) & (index <= (-1 if upto is None else upto))
        # still disturbed for the next windows' baselines: up to the recovery (exclusive)
        disturbed |= span & ((index < back) if back is not None else True)
        peak = p50[span & has_output]
        first = _first(after & has_output)
        result.append(
            Recovery(
                window=w,
                baseline_p50_ms=baseline,
                peak_ms=float(peak.max()) if peak.size else None,
                first_output_after_s=None if first is None else _since(begins[first], w.end_ms),
                recovery_s=None if back is None else _since(begins[back], w.end_ms),
                recovered=None if baseline is None else back is not None,
            )
        )
    return result


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
    run_start, run = None, 0
    for i in np.flatnonzero(candidates):
        if p50[i] <= bound:
            run_start = i if run == 0 else run_start
            run += 1
            if run == HOLD_S:
                return int(run_start)
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


def summarise(found: Sequence[Recovery]) -> dict[str, Any]:
    """Over the windows: how many recovered, the median and largest recovery and peak."""
    times = [r.recovery_s for r in found if r.recovery_s is not None]
    peaks = [r.peak_ms for r in found if r.peak_ms is not None]
    return {
        "windows": len(found),
        "recovered": sum(r.recovered is True for r in found),
        "not_recovered": sum(r.recovered is False for r in found),
        "no_baseline": sum(r.recovered is None for r in found),
        "recovery_s_median": float(np.median(times)) if times else None,
        "recovery_s_max": max(times) if times else None,
        "peak_ms_median": float(np.median(peaks)) if peaks else None,
        "peak_ms_max": max(peaks) if peaks else None,
    }


def section(
    series: pd.DataFrame,
    windows: Sequence[Window],
    measured_from_ms: int,
    measured_to_ms: int,
    baseline_s: float,
    threshold: float,
) -> dict[str, Any] | None:
    """summary.json's ``recovery``: the windows starting in the measured period and their
    summary; None when the run has no disturbance windows.

    Every window takes part (the next one ends a recovery's search, each is left out
    of the baselines); only those that start in the measured period are reported.
    """
    if not windows:
        return None
    found = [
        r
        for r in recoveries(series, windows, baseline_s, threshold)
        if measured_from_ms <= r.window.start_ms <= measured_to_ms
    ]
    return {
        "baseline_window_s": baseline_s,
        "threshold": threshold,
        "hold_s": HOLD_S,
        "windows": [r.as_dict() for r in found],
        "summary": summarise(found),
    }


def warnings(recovery: dict[str, Any] | None) -> list[str]:
    """A warning when latency did not recover after some window."""
    if recovery is None or not (stuck := recovery["summary"]["not_recovered"]):
        return []
    kinds = sorted({w["kind"] for w in recovery["windows"] if w["recovered"] is False})
    return [
        f"latency had not recovered after {stuck} of {recovery['summary']['windows']} "
        f"disturbance windows ({', '.join(kinds)}) before the next one or the end of the run: "
        f"its per-second p50 was not back within {recovery['threshold']:.0%} of the p50 before "
        f"for {HOLD_S} s"
    ]
