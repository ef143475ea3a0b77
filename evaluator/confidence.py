"""Confidence intervals for latency percentiles and for differences between runs.

Two sources of uncertainty, two tools:

- within one run, :func:`block_bootstrap` says how precisely the run's records
  pin down a percentile. Latency is autocorrelated from second to second (a GC
  pause, a slow batch), so it resamples blocks of consecutive seconds, not
  single records, which would understate the spread;
- across repeated runs, :func:`runs_interval` describes run-to-run variation,
  :func:`difference_interval` the increment between two configurations, and
  :func:`significant` whether that increment is distinguishable from zero.

Percentiles are numpy's linear method (its default), as in :mod:`evaluator.stats`;
numpy and scipy only.
"""

import math

import numpy as np
from scipy import stats

LEVEL = 0.95
MIN_BLOCK_S = 5
N_BOOT = 1000
Z95 = float(stats.norm.ppf(0.5 + LEVEL / 2))

Interval = tuple[float, float, float]  # (estimate, lo, hi)


def block_bootstrap(
    second_of_record: np.ndarray,
    latency: np.ndarray,
    qs: tuple[float, ...] = (50.0, 99.0),
    block_s: int | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[float, tuple[float, float]]:
    """95 % percentile-bootstrap interval of each percentile ``qs`` (0–100) of ``latency``.

    Moving-block bootstrap over the distinct seconds of ``second_of_record``:
    a replicate draws blocks of ``block_s`` consecutive distinct seconds
    (a gap in the data is bridged) at uniformly random starts until it holds as
    many seconds as the run, keeps every record of the drawn seconds (a second
    drawn twice counts twice) and takes the linear percentile of them; the
    interval is the 2.5th–97.5th percentile of the replicates. Default
    ``block_s``: :func:`default_block_s`.

    Each replicate is computed exactly, as a percentile weighted by how often
    each record's second was drawn, on the records sorted once.

    Raises ValueError when fewer than two blocks fit in the run.
    """
    sec = np.asarray(second_of_record)
    lat = np.asarray(latency, np.float64)
    if sec.shape != lat.shape or sec.ndim != 1:
        raise ValueError(
            f"second_of_record and latency must be 1-D of equal length: {sec.shape}, {lat.shape}"
        )
    distinct, sec_index = np.unique(sec, return_inverse=True)
    n_sec = distinct.size
    block = default_block_s(n_sec) if block_s is None else block_s
    if block < 1:
        raise ValueError(f"block_s must be at least 1, got {block}")
    if n_sec < 2 * block:
        raise ValueError(f"need at least {2 * block} seconds for {block} s blocks, got {n_sec}")
    order = np.argsort(lat, kind="stable")
    sorted_lat, sorted_sec = lat[order], sec_index[order]
    rng = np.random.default_rng(seed)
    replicates = np.empty((n_boot, len(qs)))
    for r in range(n_boot):
        drawn = np.bincount(_block_draw(rng, n_sec, block), minlength=n_sec)
        replicates[r] = _weighted_percentile(sorted_lat, np.cumsum(drawn[sorted_sec]), qs)
    tail = 100 * (1 - LEVEL) / 2
    bounds = np.percentile(replicates, [tail, 100 - tail], axis=0)
    return {q: (float(lo), float(hi)) for q, lo, hi in zip(qs, *bounds, strict=True)}


def default_block_s(seconds: int) -> int:
    """Block length for ``seconds`` of data: the square root, at least 5 s.

    Longer than the usual cube root on purpose: per-second latency is strongly
    autocorrelated, and on AR(1) series with φ = 0.8 cube-root blocks covered the
    true p50 in only about 82 % of nominal 95 % intervals (30 s blocks: 88 %).
    """
    return max(MIN_BLOCK_S, round(seconds**0.5))


def percentile_intervals(second_of_record: np.ndarray, latency: np.ndarray) -> dict | None:
    """The ``confidence`` section of summary.json: 95 % intervals of p50 and p99 by
    :func:`block_bootstrap`; None when the period is too short for two blocks."""
    seconds = np.unique(np.asarray(second_of_record)).size
    block = default_block_s(seconds)
    try:
        bounds = block_bootstrap(second_of_record, latency, (50.0, 99.0), block)
    except ValueError:
        return None
    return {
        "method": "moving-block bootstrap over seconds",
        "level": LEVEL,
        "block_s": block,
        "n_boot": N_BOOT,
        "p50": [round(v, 3) for v in bounds[50.0]],
        "p99": [round(v, 3) for v in bounds[99.0]],
    }


def runs_interval(values: np.ndarray) -> Interval:
    """(median, lo, hi) of a metric measured once in each of N independent runs.

    lo–hi is the 95 % Student-t interval of the mean of the runs: it describes
    run-to-run variation (how far another set of N runs could land), not the
    precision within one run. With one run there is no variation to measure:
    (value, nan, nan), which :func:`significant` never calls significant.
    Raises ValueError with no values.
    """
    v = np.asarray(values, np.float64)
    if v.size == 0:
        raise ValueError("need at least one run")
    median = float(np.median(v))
    if v.size == 1:
        return median, math.nan, math.nan
    half = stats.t.ppf(0.5 + LEVEL / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    mean = float(v.mean())
    return median, mean - half, mean + half


def difference_interval(a: Interval, b: Interval) -> Interval:
    """(b − a, lo, hi): the increment from ``a`` to ``b``, each (estimate, lo, hi)
    from independent runs, with a normal-approximation 95 % interval.

    Each standard error is recovered as (hi − lo) / (2 · 1.96) and they add in
    quadrature. For intervals from :func:`runs_interval` with few runs, whose
    half-width uses Student's t (> 1.96), this overstates each standard error, so
    the difference interval errs on the wide side. A nan bound gives nan bounds.
    """
    estimate = b[0] - a[0]
    se = math.hypot(_standard_error(a), _standard_error(b))
    return estimate, estimate - Z95 * se, estimate + Z95 * se


def significant(interval: Interval) -> bool:
    """True when the interval (estimate, lo, hi) excludes 0; False if it contains 0
    or a bound is nan (unknown)."""
    _, lo, hi = interval
    return lo > 0 or hi < 0


def _standard_error(interval: Interval) -> float:
    _, lo, hi = interval
    return (hi - lo) / (2 * Z95)


def _block_draw(rng: np.random.Generator, n_sec: int, block: int) -> np.ndarray:
    """Indices of the seconds of one moving-block replicate, n_sec of them."""
    starts = rng.integers(0, n_sec - block + 1, size=-(-n_sec // block))
    return (starts[:, None] + np.arange(block)).ravel()[:n_sec]


def _weighted_percentile(
    sorted_values: np.ndarray, cum_weights: np.ndarray, qs: tuple[float, ...]
) -> np.ndarray:
    """numpy's linear percentiles of ``sorted_values`` with value j repeated
    cum_weights[j] − cum_weights[j − 1] times, without building the repeats."""
    total = cum_weights[-1]
    pos = (total - 1) * np.asarray(qs) / 100
    lo = np.floor(pos)
    # Position i of the repeated sample holds the first value whose cumulative weight exceeds i.
    j_lo = np.searchsorted(cum_weights, lo, side="right")
    j_hi = np.searchsorted(cum_weights, np.minimum(lo + 1, total - 1), side="right")
    a, b = sorted_values[j_lo], sorted_values[j_hi]
    return a + (b - a) * (pos - lo)
