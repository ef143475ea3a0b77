"""Is a per-second latency series steady, rising or falling?

Input is a per-second series such as the p50 column of
:func:`evaluator.stats.timeseries`. :func:`trend` judges a whole series (the
evaluator uses it to warn when the measured window still drifts, so its numbers
should not be trusted); :func:`warmup_end` finds where the warm-up ended after
the fact; :func:`is_settled` is the live check a runner calls every few seconds
with what it has seen so far, to decide that warm-up is over.

The live check is stricter than the verdict: a window is settled only when its
slope's point estimate changes the latency by less than :data:`PERIOD_TOLERANCE`
of the median across the window. An interval that merely contains 0 does not
settle it: over a short window the interval is wide, and the JIT's slow tail
(ingest still falling 30 ms/min a minute in) passed that test and spoiled the
measured period that followed.

The slope is Theil–Sen (median of pairwise slopes, robust to latency spikes),
its 95 % interval is scipy's, and the Mann–Kendall p-value is the two-sided
Kendall-tau test of the values against time (same statistic and tie-corrected
variance, without continuity correction). Both intervals assume independent
points; per-second latency is autocorrelated, so they are somewhat too narrow,
which is one reason for the tolerance below.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

MIN_POINTS = 5
SECONDS_PER_MINUTE = 60.0
# The live warm-up check's tolerance compares the change over this span with the median.
TOLERANCE_SPAN_S = 10.0
RESOLUTION_MS = 1.0
"""Broker timestamps are whole milliseconds: a change below one is no trend, whatever
share of a median near 0 ms (the floor) it is."""
PERIOD_TOLERANCE = 0.10
"""The measured period is steady when its latency changes by less than this share of its
median over the whole period (a trend the interval cannot rule out aside): a 10 s span
would let a long period drift by far more."""

Verdict = Literal["steady", "rising", "falling"]


@dataclass(frozen=True)
class Trend:
    """Trend of a per-second latency series; see :func:`trend` for the verdict."""

    slope_ms_per_min: float
    ci95: tuple[float, float]
    mk_p: float
    median_ms: float
    seconds: int
    verdict: Verdict


def trend(
    seconds: np.ndarray,
    values: np.ndarray,
    tolerance: float = 0.03,
    span_s: float | None = TOLERANCE_SPAN_S,
) -> Trend:
    """Theil–Sen slope, its 95 % interval, Mann–Kendall p-value and a verdict.

    ``seconds`` increase strictly (gaps allowed); ``values`` are latencies in ms,
    one per second. Points whose value is NaN (seconds without output) are
    dropped; ``Trend.seconds`` counts the points used.

    Verdict: ``steady`` when the 95 % interval of the slope contains 0, or when
    the change is negligible: the slope over ``span_s`` (10 s; None: the whole
    series, first to last second) is smaller than ``tolerance`` (default 0.03,
    i.e. 3 %) of the series median in absolute value. Otherwise
    ``rising`` if the slope is positive, ``falling`` if negative. ``mk_p`` is
    reported for the reader and does not enter the verdict.

    Raises ValueError with fewer than ``MIN_POINTS`` (5) usable points: too few
    to tell a trend from noise, so "steady" could not be claimed.
    """
    x, y = _usable(seconds, values)
    if x.size < MIN_POINTS:
        raise ValueError(f"need at least {MIN_POINTS} seconds, got {x.size}")
    # Relative to the first second: pairwise differences stay exact for epoch seconds.
    slope, _, low, high = stats.theilslopes(y, x - x[0], alpha=0.95)
    median = float(np.median(y))
    span = float(x[-1] - x[0]) if span_s is None else span_s
    return Trend(
        slope_ms_per_min=float(slope) * SECONDS_PER_MINUTE,
        ci95=(float(low) * SECONDS_PER_MINUTE, float(high) * SECONDS_PER_MINUTE),
        mk_p=_mann_kendall_p(x, y),
        median_ms=median,
        seconds=int(x.size),
        verdict=_verdict(float(slope), float(low), float(high), median, tolerance, span),
    )


def steady_state(seconds: np.ndarray, values: np.ndarray) -> dict | None:
    """The ``steady_state`` section of summary.json for a measured period's per-second
    p50 (tolerance: :data:`PERIOD_TOLERANCE` over the whole period); None when it has
    fewer than ``MIN_POINTS`` seconds with outputs."""
    try:
        t = trend(seconds, values, PERIOD_TOLERANCE, span_s=None)
    except ValueError:
        return None
    return {
        "slope_ms_per_min": round(t.slope_ms_per_min, 3),
        "ci95": [round(t.ci95[0], 3), round(t.ci95[1], 3)],
        "mk_p": round(t.mk_p, 6),
        "median_ms": t.median_ms,
        "seconds": t.seconds,
        "verdict": t.verdict,
    }


def warmup_end(
    seconds: np.ndarray,
    values: np.ndarray,
    window_s: float = 60,
    step_s: float = 5,
    tolerance: float = PERIOD_TOLERANCE,
) -> float | None:
    """The first second t at which the trailing window (t − window_s, t] is settled
    (see :func:`is_settled`).

    Candidates are checked every ``step_s`` seconds, starting at the first second
    with a full window behind it (t − window_s ≥ first second), exactly as a
    runner polling :func:`is_settled` every ``step_s`` seconds would; so the
    answer is within ``step_s`` of the earliest settled window. A window with
    fewer than ``MIN_POINTS`` usable points is not settled. None if no window is.
    """
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.size == 0:
        return None
    next_check = x[0] + window_s
    for t in x:
        if t < next_check:
            continue
        if _window_steady(x, y, t, window_s, tolerance):
            return float(t)
        next_check = t + step_s
    return None


def is_settled(
    seconds: np.ndarray,
    values: np.ndarray,
    window_s: float = 60,
    tolerance: float = PERIOD_TOLERANCE,
) -> bool:
    """True when the last ``window_s`` seconds of the series are settled (the live check):
    their Theil–Sen slope changes the latency by less than ``tolerance`` of their median
    (at least :data:`RESOLUTION_MS`) across the window, whatever its interval says.

    False while the series does not yet reach ``window_s`` back from its last
    second, or when that window has fewer than ``MIN_POINTS`` usable points.
    """
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.size == 0 or x[-1] - window_s < x[0]:
        return False
    return _window_steady(x, y, x[-1], window_s, tolerance)


def _window_steady(
    x: np.ndarray, y: np.ndarray, t: float, window_s: float, tolerance: float
) -> bool:
    inside = (x > t - window_s) & (x <= t)
    xs, ys = _usable(x[inside], y[inside])
    if xs.size < MIN_POINTS:
        return False
    slope = stats.theilslopes(ys, xs - xs[0]).slope
    return bool(abs(slope) * window_s < _allowed(tolerance, float(np.median(ys))))


def _usable(seconds: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"seconds and values must be 1-D of equal length: {x.shape}, {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise ValueError("seconds must increase strictly")
    keep = ~np.isnan(y)
    return x[keep], y[keep]


def _mann_kendall_p(x: np.ndarray, y: np.ndarray) -> float:
    p = stats.kendalltau(x, y).pvalue
    # A constant series has no variance to test against: no evidence of a trend.
    return 1.0 if np.isnan(p) else float(p)


def _verdict(
    slope: float, low: float, high: float, median: float, tolerance: float, span_s: float
) -> Verdict:
    if low <= 0.0 <= high or abs(slope) * span_s < _allowed(tolerance, median):
        return "steady"
    return "rising" if slope > 0 else "falling"


def _allowed(tolerance: float, median: float) -> float:
    """The change a steady series may show: ``tolerance`` of its median, at least the
    broker clock's resolution."""
    return max(tolerance * abs(median), RESOLUTION_MS)
