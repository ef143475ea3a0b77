"""The pass curve of a capacity search: the probability that a probe passes against its
rate, fitted to every probe (:func:`fit_pass`), which places the capacity (the rate passed
half the time) with a 95 % interval.
Pure: :func:`stagebench.capacity.search.search` asks it where to probe next, the capacity
command reports it.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PASS_HALF_WIDTH = (0.02, 0.30)
"""How gradually a stage stops keeping up, as the prior of :func:`fit_pass` has it: the
capacity is 1 + h times the rate passed 90 % of the time, h log-uniform between these.
Near capacity a stage's verdicts are a toss-up over some per cent of the rate; over more
than 30 % a stage would have no capacity a dozen probes could place. The bounds are what
keeps the posterior proper when every pass lies below every failure, which a bisection
makes so whatever the stage does. Below 2 % a dozen probes cannot tell so sharp a curve
from a step, and a prior reaching lower leans on steep curves, whose intervals are too
narrow (docs/capacity.md#the-capacity)."""
_LN9 = math.log(9)
_SLOPES = _LN9 / np.log1p(np.geomspace(*PASS_HALF_WIDTH, 17))
"""The prior's slopes, logit per unit of ln rate, equally weighted: log-uniform in h."""
_GRID = 200
"""Points of ln capacity over the span where the posterior has its mass. With 17 slopes,
the estimates and bounds are within 1 % of a grid of 300 × 25."""
_QUANTILES = (0.025, 0.5, 0.975)


@dataclass(frozen=True)
class PassFit:
    """The probability that a probe passes, against its rate: logit P(pass) = intercept +
    slope · ln(rate in msg/s), slope < 0.

    ``capacity_mps`` is the rate passed half the time, ``pass90_mps`` the rate passed 90 %
    of the time, each the posterior median with its 95 % interval (the 2.5 and 97.5 %
    quantiles). ``intercept`` and ``slope`` are the curve through the posterior medians of
    the capacity and of the slope, so -intercept / slope is ln ``capacity_mps``."""

    capacity_mps: float
    capacity_ci95_mps: tuple[float, float]
    pass90_mps: float
    pass90_ci95_mps: tuple[float, float]
    intercept: float
    slope: float
    probes: int


def fit_pass(rates: Sequence[float], passed: Sequence[bool]) -> PassFit | None:
    """Bayesian logistic regression of a probe's pass on ln of its rate, over every probe;
    None without both a pass and a failure (the capacity then lies beyond the probes).

    Why a posterior: the search bisects, and bisection keeps every pass below every
    failure whatever the stage does (complete separation). The likelihood alone then
    always prefers a step at the bracket (an infinite slope): intervals drawn from it
    (Wald, profile likelihood) shrink with the bracket instead of with the evidence, and a
    parametric bootstrap from that step never varies. Firth's penalty keeps the slope
    finite but favours flat curves so much that its profile interval spans several-fold
    with a dozen probes. The posterior weighs every slope the probes leave possible, within
    :data:`PASS_HALF_WIDTH`, and it does not depend on where the search chose to probe.
    With a flat prior on ln capacity over the probed rates widened by 30 % either side, it
    is computed on a grid (ln capacity × 17 slopes), with no sampler or optimiser to
    converge. In 200 simulated searches each (:func:`stagebench.capacity.search.search` from
    1,000 msg/s at a precision of 0.10, with a logistic truth) the 95 % interval held the
    capacity in 100 % of them for deterministic verdicts and for verdicts a toss-up over
    ±4.5 % of the rate, 97 % over ±10 % and 90 % over ±20 %; its median width was 20–23 %
    of the rate.
    """
    x = np.log(np.asarray(rates, np.float64))
    y = np.asarray(passed, bool)
    if y.all() or not y.any():
        return None
    theta, weights = _posterior(x, y)
    capacity = np.exp(_quantiles(theta, weights.sum(axis=1)))
    pass90 = np.exp(_quantiles(theta[:, None] - _LN9 / _SLOPES, weights))
    slope = float(_quantiles(_SLOPES, weights.sum(axis=0))[1])
    return PassFit(
        capacity_mps=float(capacity[1]),
        capacity_ci95_mps=(float(capacity[0]), float(capacity[2])),
        pass90_mps=float(pass90[1]),
        pass90_ci95_mps=(float(pass90[0]), float(pass90[2])),
        intercept=slope * math.log(capacity[1]),
        slope=-slope,
        probes=int(y.size),
    )


def _posterior(x: np.ndarray, passed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The posterior on a grid, as weights summing to 1: ln capacity (rows, returned) ×
    :data:`_SLOPES` (columns). A coarse pass over the prior's span finds where the mass is
    and the grid then covers that span finely; the coarse pass holds the probed rates and
    the middles between them, so a gap between a pass and a failure narrower than its step
    is not missed."""
    sign = np.where(passed, 1.0, -1.0)
    probed = np.unique(x)
    reach = math.log1p(PASS_HALF_WIDTH[1])
    span = np.linspace(probed[0] - reach, probed[-1] + reach, 100)
    coarse = np.unique(np.concatenate([span, probed, (probed[1:] + probed[:-1]) / 2]))
    mass = _likelihood(coarse, x, sign).sum(axis=1)
    held = np.flatnonzero(mass > 1e-9 * mass.max())
    lo, hi = coarse[max(held[0] - 1, 0)], coarse[min(held[-1] + 1, coarse.size - 1)]
    theta = np.unique(
        np.concatenate([np.linspace(lo, hi, _GRID), probed[(probed > lo) & (probed < hi)]])
    )
    step = np.diff(theta)
    width = np.concatenate([step, [0.0]]) / 2 + np.concatenate([[0.0], step]) / 2  # trapezoid
    weights = _likelihood(theta, x, sign) * width[:, None]
    return theta, weights / weights.sum()


def _likelihood(theta: np.ndarray, x: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """The probes' likelihood, relative to its largest value, at each ln capacity θ (rows)
    and slope b (columns): a probe at ln rate x passes with probability 1 / (1 + e^(-b(θ-x)))."""
    margin = (theta[:, None] - x) * sign
    log_l = -_softplus(-_SLOPES[:, None] * margin[:, None, :]).sum(axis=2)
    likelihood: np.ndarray = np.exp(log_l - log_l.max())
    return likelihood


def _softplus(v: np.ndarray) -> np.ndarray:
    """ln(1 + e^v) without overflow (twice as fast as ``np.logaddexp(0, v)``)."""
    value: np.ndarray = np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0.0)
    return value


def _quantiles(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The 2.5, 50 and 97.5 % quantiles of ``values`` under ``weights`` (same shape),
    interpolated between values placed at the middle of their weight. Marginalise first:
    repeated values (a grid's rows or columns) would make steps."""
    order = np.argsort(values, axis=None)
    v, w = values.ravel()[order], weights.ravel()[order]
    cdf = (np.cumsum(w) - w / 2) / w.sum()
    quantiles: np.ndarray = np.interp(_QUANTILES, cdf, v)
    return quantiles
