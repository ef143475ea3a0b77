"""The statistics that judge a difference between runs: Student-t intervals of paired
and of independent runs, intervals of a sum or a ratio of intervals (MOVER), Holm's
correction of a table's tests, and the spread of the host's pace.

Pure functions on numbers; the stage table (:mod:`evaluator.comparison.increments`) and the A/B
comparison (:mod:`evaluator.comparison.ab`) choose among them by how their runs were made.
"""

import math
import statistics
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import stats

from evaluator.confidence import LEVEL

ALPHA = round(1 - LEVEL, 10)
CORRECTION = "holm"
QUANTUM_VAR = 1 / 12
"""Variance (ms²) of rounding a percentile to whole milliseconds, the broker's resolution:
the least variance a run's value can be said to have. Runs whose p50s agree to the
millisecond are not evidence of no spread, and a zero spread would call any non-zero
difference certain."""
MAD_TO_SD = 1.4826
"""σ of a normal distribution over its median absolute deviation."""
PAIR_DRIFT = float(stats.norm.ppf(0.5 + LEVEL / 2)) * math.sqrt(2) * MAD_TO_SD
"""Pace spread (relative MAD) → how far apart two runs' paces fall in 95 % of pairs, for
paces spread normally: the difference of two runs has σ·√2. Three runs in a row on an idle
host spanned 12 %; a MAD does not grow with the number of runs as that range does."""


def paired_t(differences: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, lo, hi, p) of per-round differences: the 95 % Student-t interval of
    their mean (n − 1 degrees of freedom) and the two-sided p-value of mean 0.
    Needs two differences or more."""
    d = np.asarray(differences, np.float64)
    sd = max(float(d.std(ddof=1)), math.sqrt(2 * QUANTUM_VAR))  # a difference of two
    return _t(float(d.mean()), sd / math.sqrt(d.size), d.size - 1)


def welch(before: Sequence[float], after: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean(after) − mean(before), lo, hi, p): Welch's t for two independent samples
    of unequal variance, with Welch–Satterthwaite degrees of freedom. Needs two
    values or more in each."""
    a, b = np.asarray(before, np.float64), np.asarray(after, np.float64)
    va = max(float(a.var(ddof=1)), QUANTUM_VAR) / a.size
    vb = max(float(b.var(ddof=1)), QUANTUM_VAR) / b.size
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return _t(float(b.mean() - a.mean()), se, float(df))


def _t(estimate: float, se: float, df: float) -> tuple[float, float, float, float]:
    """(estimate, lo, hi, p) of a t statistic with standard error ``se`` > 0."""
    half = float(stats.t.ppf(0.5 + LEVEL / 2, df)) * se
    p = 2 * float(stats.t.sf(abs(estimate) / se, df))
    return estimate, estimate - half, estimate + half, p


def mover(terms: Iterable[tuple[float, float, float, float]]) -> tuple[float, float, float]:
    """(Σ w·θ, lo, hi) of a weighted sum of independent estimates, each term (w, θ,
    lo, hi) with its own 95 % interval, by the method of variance estimates
    recovery (Zou & Donner 2008): each bound adds in quadrature the distances from
    the estimates to the bounds on its own side (the lower bound of a term with
    negative weight comes from its upper bound). Asymmetric intervals such as a
    percentile bootstrap's stay asymmetric, and the sum stays centred on the
    estimates the intervals belong to."""
    total, below, above = 0.0, 0.0, 0.0
    for w, theta, lo, hi in terms:
        down, up = max(theta - lo, 0.0) * abs(w), max(hi - theta, 0.0) * abs(w)
        if w < 0:
            down, up = up, down
        total += w * theta
        below += down**2
        above += up**2
    return total, total - math.sqrt(below), total + math.sqrt(above)


def ratio_mover(
    numerator: tuple[float, float, float], denominator: tuple[float, float, float]
) -> tuple[float, float, float] | None:
    """(θ1/θ2, lo, hi) of the ratio of two independent positive estimates, each (θ, lo,
    hi) with its own 95 % interval, by the method of variance estimates recovery for a
    ratio (Donner & Zou 2012); None when the denominator's interval reaches 0, where
    the ratio has no bound."""
    t1, l1, u1 = numerator
    t2, l2, u2 = denominator
    if min(t2, l2) <= 0 or min(t1, l1) < 0:
        return None
    lo_root = (t1 * t2) ** 2 - l1 * u2 * (2 * t1 - l1) * (2 * t2 - u2)
    hi_root = (t1 * t2) ** 2 - u1 * l2 * (2 * t1 - u1) * (2 * t2 - l2)
    lo_div, hi_div = u2 * (2 * t2 - u2), l2 * (2 * t2 - l2)
    ratio = t1 / t2
    lo = (t1 * t2 - math.sqrt(max(lo_root, 0.0))) / lo_div if lo_div > 0 else 0.0
    hi = (t1 * t2 + math.sqrt(max(hi_root, 0.0))) / hi_div if hi_div > 0 else math.inf
    return ratio, min(lo, ratio), max(hi, ratio)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values``, in their order: the k-th smallest
    times (m − k + 1), never below the one before it, at most 1. An adjusted value
    below α keeps the chance of any false verdict in the table at α."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def pace_spread(paces_ms: Sequence[float]) -> float | None:
    """The median absolute deviation of the runs' paces over their median: a share of
    the host's speed, directly comparable to an increment's share of the latency it is
    taken over, and, unlike a range, no larger for more runs. None with fewer than two."""
    if len(paces_ms) < 2:
        return None
    centre = statistics.median(paces_ms)
    return round(statistics.median(abs(p - centre) for p in paces_ms) / centre, 4)
