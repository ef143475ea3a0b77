"""Is a per-second latency series steady, rising or falling, or can its data not tell?

Input is a per-second series such as the p50 column of
:func:`evaluator.statistics.stats.timeseries`. :func:`trend` judges a whole series: the
evaluator uses it on the measured period (:func:`steady_state`) to warn when the
latency still drifts, so its numbers should not be trusted. :func:`is_settled`
is the live check a runner calls every few seconds with what it has seen so far,
to decide that warm-up is over; :func:`warmup_end` replays it on a recorded series.

Per-second latency is autocorrelated: a slow micro-batch or a GC pause lasts
several seconds. Tests that assume independent points are then far too sure of
themselves: on stationary AR(1) series with φ = 0.8, the independent-points
interval of the slope excluded 0 in about half of the series. So the slope is
Theil–Sen (the median of pairwise slopes, robust to latency spikes) with Sen's
rank interval, and the Mann–Kendall variance both rest on is inflated by how
far the autocorrelation of the detrended series' ranks reaches (:func:`_inflation`);
the effective number of points, n divided by that inflation, sets the degrees of
freedom of the Student-t quantile that replaces the normal one (as Santer et al.
2000 do for least-squares trends). Coverage on simulated series:
``benchmarks/statistics_coverage.py``.

The verdict is on the change over the period (slope times the span from the
first to the last second), against a tolerance: a share of the median, at least
:data:`RESOLUTION_MS`. ``steady`` only when the whole 95 % interval of the change
lies within ±tolerance; ``rising`` or ``falling`` when it lies wholly above or
below; ``undetermined`` otherwise: the data cannot tell a drift of the
tolerance's size from the latency's own wandering.

The live check cannot wait for such an interval (over a minute of a noisy series
it is wider than any useful tolerance), and it looks about thirty times, so a
lenient test passes by chance at one of its looks: with two windows of 60 s, 46 % of
series still falling 15 %/min passed before 300 s. It passes only when the medians of
:data:`SETTLE_WINDOWS` consecutive, non-overlapping windows agree within the tolerance
(or lie one millisecond apart: one level at the broker clock's resolution). A drift or
a start that has not faded moves the windows' medians apart. A slope fitted within
each window would add little to that and mostly measure the
latency's own wander: with windows of 10 s, requiring each window's Theil–Sen change
to stay within the tolerance kept half of the flat series that wander by 14 % (AR(1),
φ = 0.7) waiting past 200 s, where the medians of three windows of 14 s settle them at
a median of 48 s (``tests/evaluator/test_steady.py`` checks it on fewer series). And
those three medians end a start of twice the level, decaying with a 15 s time constant,
early in 0.9 % of series wandering by 10 %, where 10 s windows with their slopes did in
2.5 % (``benchmarks/statistics_coverage.py``).
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evaluator.config import SETTLE_WINDOWS, STEADY_TOLERANCE

MIN_POINTS = 5
SECONDS_PER_MINUTE = 60.0
LEVEL = 0.95
MAX_RHO = 0.99
"""Caps φ = ρ2/ρ1, which noise can lift above 1: an autocorrelation growing with the
lag is no lingering wander's. Below 400 points :data:`MAX_REACH` caps it lower."""
MAX_REACH = 0.25
"""The autocorrelation's decay reaches, 1/(1 − φ), at most this share of the points
(the seconds with outputs; see :func:`_inflation`)."""
RESOLUTION_MS = 1.0
"""Broker timestamps are whole milliseconds: a change below one is no trend, whatever
share of a median near 0 ms (the floor) it is."""

Verdict = Literal["steady", "rising", "falling", "undetermined"]


@dataclass(frozen=True)
class Trend:
    """Trend of a per-second latency series; see :func:`trend` for the verdict.

    ``change_ms`` is the 95 % interval of the change over ``span_s`` (the slope's
    interval times the span) and ``allowed_ms`` the tolerance it is held against.
    ``effective_seconds`` is how many independent seconds the autocorrelated ones are
    worth: with a few, Sen's interval reaches the slopes between neighbouring seconds,
    and 49 seconds worth about 5, wandering between 2 064 and 2 872 ms, got a change
    of ±14 800 ms.
    """

    slope_ms_per_min: float
    ci95: tuple[float, float]
    mk_p: float
    median_ms: float
    seconds: int
    span_s: float
    change_ms: tuple[float, float]
    allowed_ms: float
    effective_seconds: float
    verdict: Verdict


def trend(seconds: np.ndarray, values: np.ndarray, tolerance: float = STEADY_TOLERANCE) -> Trend:
    """Theil–Sen slope, its autocorrelation-corrected 95 % interval, the corrected
    Mann–Kendall p-value and a three-way verdict (see the module's docstring).

    ``seconds`` increase strictly (gaps allowed); ``values`` are latencies in ms,
    one per second. Points whose value is NaN (seconds without output) are
    dropped; ``Trend.seconds`` counts the points used. ``tolerance``: the change
    over the whole series, as a share of its median, that still counts as steady.

    Raises ValueError with fewer than ``MIN_POINTS`` (5) usable points: too few
    to tell a trend from noise.
    """
    x, y = _usable(seconds, values)
    if x.size < MIN_POINTS:
        raise ValueError(f"need at least {MIN_POINTS} seconds, got {x.size}")
    # Relative to the first second: pairwise differences stay exact for epoch seconds.
    x = x - x[0]
    slopes = _pairwise_slopes(x, y)
    slope = float(np.median(slopes))
    inflation = _inflation(x, y, slope)
    variance = _mk_variance(y) * inflation
    effective = x.size / inflation
    # Student-t on the effective number of points, less the two a line takes
    dof = max(effective - 2, 1)
    quantile = float(stats.t.ppf(0.5 + LEVEL / 2, dof))
    low, high = _sen_interval(slopes, variance, quantile)
    s_stat = int(np.count_nonzero(slopes > 0)) - int(np.count_nonzero(slopes < 0))
    median = float(np.median(y))
    span = float(x[-1])
    allowed = _allowed(tolerance, median)
    change = (low * span, high * span)
    return Trend(
        slope_ms_per_min=slope * SECONDS_PER_MINUTE,
        ci95=(low * SECONDS_PER_MINUTE, high * SECONDS_PER_MINUTE),
        mk_p=_mann_kendall_p(s_stat, variance, dof),
        median_ms=median,
        seconds=int(x.size),
        span_s=span,
        change_ms=change,
        allowed_ms=allowed,
        effective_seconds=effective,
        verdict=_verdict(change, allowed),
    )


@dataclass(frozen=True)
class Level:
    """The level of a settled stretch of a per-second series: its median, the 95 %
    interval of that median, and how many independent seconds its seconds are worth."""

    median_ms: float
    ci95: tuple[float, float]
    seconds: int
    effective_seconds: float


def level(seconds: np.ndarray, values: np.ndarray) -> Level:
    """The median of a per-second series and its 95 % interval: the order statistics at
    n/2 ∓ t·√(n·I)/2, the distribution-free interval of a median with the variance
    inflated by I, the autocorrelation of the series' ranks (:func:`_inflation`, as for
    the trend's interval; about its level, so a drift widens the interval too), and
    Student t on the effective seconds n/I.

    Raises ValueError with fewer than ``MIN_POINTS`` usable points.
    """
    x, y = _usable(seconds, values)
    if x.size < MIN_POINTS:
        raise ValueError(f"need at least {MIN_POINTS} seconds, got {x.size}")
    inflation = _inflation(x - x[0], y, 0.0)
    n = y.size
    effective = n / inflation
    quantile = float(stats.t.ppf(0.5 + LEVEL / 2, max(effective - 1, 1)))
    half = quantile * np.sqrt(n * inflation) / 2
    ordered = np.sort(y)
    lower = min(max(int(np.floor(n / 2 - half)), 0), n - 1)
    upper = min(max(int(np.ceil(n / 2 + half)) - 1, 0), n - 1)
    return Level(
        median_ms=float(np.median(y)),
        ci95=(float(ordered[lower]), float(ordered[upper])),
        seconds=int(n),
        effective_seconds=effective,
    )


def settled_throughout(
    seconds: np.ndarray,
    values: np.ndarray,
    tolerance: float = STEADY_TOLERANCE,
    windows: int = SETTLE_WINDOWS,
) -> bool:
    """The live check's rule (:func:`is_settled`) over a whole stretch: its span cut into
    ``windows`` windows of equal length (each second in one), whose medians agree within
    ``tolerance``; False when a window has fewer than ``MIN_POINTS`` usable seconds."""
    x = np.asarray(seconds, np.float64)
    if x.size == 0:
        return False
    width = (float(x[-1] - x[0]) + 1) / windows
    return _settled_at(x, np.asarray(values, np.float64), x[-1], width, tolerance, windows)


def steady_state(
    seconds: np.ndarray, values: np.ndarray, tolerance: float = STEADY_TOLERANCE
) -> dict | None:
    """The ``steady_state`` section of summary.json for a measured period's per-second
    p50; None when it has fewer than ``MIN_POINTS`` seconds with outputs."""
    try:
        t = trend(seconds, values, tolerance)
    except ValueError:
        return None
    return {
        "slope_ms_per_min": round(t.slope_ms_per_min, 3),
        "ci95": [round(t.ci95[0], 3), round(t.ci95[1], 3)],
        "mk_p": round(t.mk_p, 6),
        "median_ms": t.median_ms,
        "seconds": t.seconds,
        "span_s": t.span_s,
        "change_ms": [round(t.change_ms[0], 3), round(t.change_ms[1], 3)],
        "tolerance": tolerance,
        "allowed_ms": round(t.allowed_ms, 3),
        "effective_seconds": round(t.effective_seconds, 1),
        "method": "Theil–Sen slope; Sen interval and Mann–Kendall test, variance inflated "
        "for the ranks' autocorrelation (lags 1 and 2, reaching at most a quarter of the "
        "seconds), Student t on the effective points",
        "verdict": t.verdict,
    }


def warmup_end(
    seconds: np.ndarray,
    values: np.ndarray,
    window_s: float = 60,
    step_s: float = 5,
    tolerance: float = STEADY_TOLERANCE,
    windows: int = SETTLE_WINDOWS,
) -> float | None:
    """The first second t at which :func:`is_settled` passes on the series up to t.

    Candidates are checked every ``step_s`` seconds, starting at the first second
    with ``windows`` full windows behind it, exactly as a runner polling
    :func:`is_settled` every ``step_s`` seconds would; so the answer is within
    ``step_s`` of the earliest settled second. None if none is.
    """
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.size == 0:
        return None
    next_check = x[0] + windows * window_s
    for t in x:
        if t < next_check:
            continue
        if _settled_at(x, y, t, window_s, tolerance, windows):
            return float(t)
        next_check = t + step_s
    return None


def is_settled(
    seconds: np.ndarray,
    values: np.ndarray,
    window_s: float = 60,
    tolerance: float = STEADY_TOLERANCE,
    windows: int = SETTLE_WINDOWS,
) -> bool:
    """True when the series has settled (the live check): the medians of its last
    ``windows`` non-overlapping windows of ``window_s`` seconds lie within ``tolerance``
    of the median of them all (at least :data:`RESOLUTION_MS`), or at most
    :data:`RESOLUTION_MS` apart.

    False while the series does not yet reach ``windows × window_s`` back from its
    last second, or when a window has fewer than ``MIN_POINTS`` usable points.
    """
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.size == 0 or x[-1] - windows * window_s < x[0]:
        return False
    return _settled_at(x, y, x[-1], window_s, tolerance, windows)


def _settled_at(
    x: np.ndarray, y: np.ndarray, t: float, window_s: float, tolerance: float, windows: int
) -> bool:
    medians = []
    for k in range(windows):
        end = t - k * window_s
        inside = (x > end - window_s) & (x <= end)
        _, ys = _usable(x[inside], y[inside])
        if ys.size < MIN_POINTS:
            return False
        medians.append(float(np.median(ys)))
    _, span = _usable(x[x > t - windows * window_s], y[x > t - windows * window_s])
    spread = max(medians) - min(medians)
    # medians of whole-millisecond latencies a tick apart are one level at that resolution
    return spread <= RESOLUTION_MS or spread < _allowed(tolerance, float(np.median(span)))


def _usable(seconds: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(seconds, np.float64)
    y = np.asarray(values, np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"seconds and values must be 1-D of equal length: {x.shape}, {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise ValueError("seconds must increase strictly")
    keep = ~np.isnan(y)
    return x[keep], y[keep]


def _pairwise_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The slopes between every pair of points, sorted; row by row, so that memory stays
    at one array of n(n − 1)/2 values."""
    n = x.size
    slopes = np.empty(n * (n - 1) // 2)
    at = 0
    for i in range(n - 1):
        row = (y[i + 1 :] - y[i]) / (x[i + 1 :] - x[i])
        slopes[at : at + row.size] = row
        at += row.size
    slopes.sort()
    return slopes


def _mk_variance(y: np.ndarray) -> float:
    """Variance of the Mann–Kendall S of independent points, corrected for tied values."""
    n = y.size
    _, ties = np.unique(y, return_counts=True)
    return float(n * (n - 1) * (2 * n + 5) - np.sum(ties * (ties - 1) * (2 * ties + 5))) / 18


def _inflation(x: np.ndarray, y: np.ndarray, slope: float) -> float:
    """How much autocorrelation inflates the variance of S.

    The series less its trend is taken as a lingering AR(1) wander plus noise of its
    own, the shape of a per-second median: a level that lasts seconds, and the
    sampling noise of the median of each second's records. Its autocorrelation then
    decays as ρ_k = ρ1·φ^(k−1), and the inflation is 1 + 2ρ1/(1 − φ). ρ1 and ρ2 are the
    lag-1 and lag-2 autocorrelations of the ranks, each plus Kendall's bias correction
    (1 + 3ρ1)/n (short series understate them: by about 0.06 at 60 points and φ = 0.8,
    which narrows the interval by a fifth). φ = ρ2/ρ1, at least ρ1 (the noise only
    lowers ρ1): taking φ = ρ1, as for a pure AR(1), would miss the wander's reach
    whenever the noise is large. At least 1: a series that looks anticorrelated gets no
    narrower interval than independent points would.

    φ is at most 1 − 1/(:data:`MAX_REACH`·n), whatever ρ1, so that the decay reaches at
    most a quarter of the n points: autocorrelations are not estimated beyond lag n/4
    (Box and Jenkins), and over a minute ρ2/ρ1 is noisy. Without that bound a φ near 1
    that noise produced made 4.6 % of simulated minutes of independent noise worth fewer
    than 5 seconds; with it, none (``benchmarks/statistics_coverage.py``, ``worth``),
    and the slope's interval covers as often as before on AR(1) wander (``coverage``).
    """
    n = y.size
    ranks = stats.rankdata(y - slope * x)
    d = ranks - ranks.mean()
    spread = float(d @ d)
    if spread == 0:
        return 1.0
    rho1 = float(d[:-1] @ d[1:]) / spread
    correction = (1 + 3 * rho1) / n
    rho1 += correction
    if rho1 <= 0:
        return 1.0
    rho2 = float(d[:-2] @ d[2:]) / spread + correction
    phi = min(max(rho2 / rho1, rho1), MAX_RHO, 1 - 1 / (MAX_REACH * n))
    return max(1.0, 1 + 2 * rho1 / (1 - phi))


def _sen_interval(slopes: np.ndarray, variance: float, quantile: float) -> tuple[float, float]:
    """Sen's (1968) interval of the slope: the sorted pairwise slopes at the ranks
    N/2 ∓ quantile·√Var(S)/2, clamped to the smallest and largest."""
    half = quantile * np.sqrt(variance) / 2
    last = slopes.size - 1
    lower = min(max(int(np.round(slopes.size / 2 - half)) - 1, 0), last)
    upper = min(max(int(np.round(slopes.size / 2 + half)), 0), last)
    return float(slopes[lower]), float(slopes[upper])


def _mann_kendall_p(s_stat: int, variance: float, dof: float) -> float:
    """Two-sided p-value of S with a continuity correction, Student t on ``dof``; 1 when
    there is no variance to test against (a constant series: no evidence of a trend)."""
    if variance <= 0 or s_stat == 0:
        return 1.0
    return float(2 * stats.t.sf((abs(s_stat) - 1) / np.sqrt(variance), dof))


def _verdict(change: tuple[float, float], allowed: float) -> Verdict:
    low, high = change
    if -allowed < low and high < allowed:
        return "steady"
    if low > allowed:
        return "rising"
    if high < -allowed:
        return "falling"
    return "undetermined"


def _allowed(tolerance: float, median: float) -> float:
    """The change a steady series may show: ``tolerance`` of its median, at least the
    broker clock's resolution."""
    return max(tolerance * abs(median), RESOLUTION_MS)
