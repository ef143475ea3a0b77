"""The statistics that judge a difference between runs: Student-t tests of paired and of
independent runs, with their intervals at any level and the rounds a difference needs,
intervals of a sum or a ratio of intervals (MOVER), the correction of a table's tests,
and the spread of the host's pace.

Pure functions on numbers; the stage table (:mod:`evaluator.comparison.increments`) and the A/B
comparison (:mod:`evaluator.comparison.ab`) choose among them by how their runs were made.
"""

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluator.statistics.confidence import LEVEL

ALPHA = round(1 - LEVEL, 10)
CORRECTION = "bonferroni"
"""How a table's tests are judged together: each at α / m for m tests, and its interval
at 1 − α / m, so the intervals hold jointly with 95 % and a verdict is "significant"
exactly when its interval excludes 0. Holm's step-down rejects a little more, but no
interval agrees with its verdicts."""
MAX_ROUNDS = 100
"""The most rounds :meth:`TTest.rounds_to_resolve` looks at."""
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


@dataclass(frozen=True)
class TTest:
    """A Student-t test of a difference: its estimate, standard error and degrees of
    freedom, and what it was made of (the per-run variances and counts of its one or two
    samples), so that it can be judged at any level and projected to more runs."""

    estimate: float
    se: float
    df: float
    variances: tuple[float, ...]
    """The variance of one run's value (paired: of one round's difference; else of each
    sample's runs)."""
    sizes: tuple[int, ...]

    @property
    def p(self) -> float:
        """The two-sided p-value of a difference of 0."""
        return 2 * float(stats.t.sf(abs(self.estimate) / self.se, self.df))

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """The interval of the difference at ``level`` (two-sided)."""
        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.se
        return self.estimate - half, self.estimate + half

    def with_runs(self, n: int) -> "TTest":
        """The same estimate and per-run variances with ``n`` runs in each sample."""
        return _test(self.estimate, self.variances, (n,) * len(self.sizes))

    def rounds_to_resolve(self, tests: int) -> int | None:
        """The fewest runs per sample (rounds, in a suite) at which this estimate, with
        the variances seen, would be significant among ``tests`` tests corrected
        together (:data:`CORRECTION`); None beyond :data:`MAX_ROUNDS`."""
        level = joint_level(tests)
        for n in range(2, MAX_ROUNDS + 1):
            lo, hi = self.with_runs(n).interval(level)
            if lo > 0 or hi < 0:
                return n
        return None


def _test(estimate: float, variances: tuple[float, ...], sizes: tuple[int, ...]) -> TTest:
    """One sample (paired: n − 1 degrees of freedom) or two (Welch–Satterthwaite)."""
    shares = [v / n for v, n in zip(variances, sizes, strict=True)]
    # one sample: its sd over √n, as the one-sample t is usually written
    one = math.sqrt(variances[0]) / math.sqrt(sizes[0])
    se = one if len(sizes) == 1 else math.sqrt(sum(shares))
    df = sum(shares) ** 2 / sum(s**2 / (n - 1) for s, n in zip(shares, sizes, strict=True))
    return TTest(estimate, se, float(df), variances, sizes)


def paired_t(differences: Sequence[float]) -> TTest:
    """The test of per-round differences' mean: Student-t with n − 1 degrees of freedom.
    Needs two differences or more."""
    d = np.asarray(differences, np.float64)
    variance = max(float(d.var(ddof=1)), 2 * QUANTUM_VAR)  # a difference of two
    return _test(float(d.mean()), (variance,), (d.size,))


def welch(before: Sequence[float], after: Sequence[float]) -> TTest:
    """The test of mean(after) − mean(before): Welch's t for two independent samples of
    unequal variance, with Welch–Satterthwaite degrees of freedom. Needs two values or
    more in each."""
    a, b = np.asarray(before, np.float64), np.asarray(after, np.float64)
    va, vb = (max(float(x.var(ddof=1)), QUANTUM_VAR) for x in (a, b))
    return _test(float(b.mean() - a.mean()), (va, vb), (a.size, b.size))


def joint_level(tests: int) -> float:
    """The level of each of ``tests`` intervals that hold jointly at :data:`LEVEL`
    (Bonferroni)."""
    return 1 - ALPHA / max(tests, 1)


def adjusted(p_values: Sequence[float]) -> list[float]:
    """Bonferroni's adjustment of ``p_values``, in their order: each times their number,
    at most 1. An adjusted value below α keeps the chance of any false verdict among
    them at α, and falls below it exactly when the interval at :func:`joint_level`
    excludes 0."""
    return [min(1.0, len(p_values) * p) for p in p_values]


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


def pace_spread(paces_ms: Sequence[float]) -> float | None:
    """The median absolute deviation of the runs' paces over their median: a share of
    the host's speed, directly comparable to an increment's share of the latency it is
    taken over, and, unlike a range, no larger for more runs. None with fewer than two."""
    if len(paces_ms) < 2:
        return None
    centre = statistics.median(paces_ms)
    return round(statistics.median(abs(p - centre) for p in paces_ms) / centre, 4)
