"""Confidence intervals for latency percentiles within a run and for a metric across runs.

Two sources of uncertainty, two tools:

- within one run, :func:`percentile_interval` says how precisely the run's
  records pin down a percentile. Latency is autocorrelated from second to second
  (a GC pause, a slow batch), so the records of one second, and of seconds close
  together, are not independent; treating them as such would make the interval
  far too narrow;
- across repeated runs, :func:`runs_interval` describes run-to-run variation
  (:mod:`evaluator.comparison.increments` judges increments from it).

Percentiles are numpy's linear method (its default), as in :mod:`evaluator.statistics.stats`;
numpy and scipy only.
"""

import math

import numpy as np
from scipy import stats

LEVEL = 0.95
SECTIONS = 4
"""Consecutive sections of a run whose spread gives a percentile's precision. Few and
long, so that sections lie further apart than latency stays correlated, with Student's t
for their few degrees of freedom: on AR(1) series with φ = 0.8 (50 records a second,
1 000 each), nominal 95 % intervals held the true p99 of 60 s in 86.5 % with eight
sections, 90.2 % with six and 94.7 % with four, of 300 s in 92.8, 95.3 and 98.0 %.
Three would widen the p50's intervals of 300 s by 31 %."""
MIN_SECTION_S = 4
"""Seconds a section needs at least: a period of fewer than 16 gets no interval."""

Interval = tuple[float, float, float]  # (estimate, lo, hi)


def percentile_interval(
    second_of_record: np.ndarray,
    latency: np.ndarray,
    qs: tuple[float, ...] = (50.0, 99.0),
    sections: int = SECTIONS,
) -> dict[float, tuple[float, float]]:
    """95 % interval of each percentile ``qs`` (0–100) of ``latency``.

    The run's distinct seconds (``second_of_record``, in time order) are cut into
    ``sections`` consecutive sections of equal count. A percentile q is where the
    share of records at or below it is p = q/100; each section's records add
    ``1{latency < q̂} + ½·1{latency = q̂} − p`` (ties split: latencies are whole
    milliseconds and pile up at the median) to that share's error. The spread of
    the sections' sums is its batch-means standard error se, free of how the
    seconds within a section depend on each other. The interval is Woodruff's: the
    percentiles at p ∓ t·se, t Student's with ``sections`` − 1 degrees of freedom
    for so few sections. It is asymmetric where the distribution is, and takes no
    density estimate.

    Four sums make a noisy variance, and one that comes out small by chance makes
    the interval far too narrow: at p99 a section holds a handful of records past
    the percentile, and sections with near-equal counts are common. So se² is at
    least the sum of the seconds' squared sums plus twice the products of adjacent
    seconds' sums: the variance that each second's records and their covariance
    with the next second's contribute. While latency is not negatively
    autocorrelated, every other term of the share's variance is a covariance ≥ 0,
    so this is a lower bound, and it is estimated from all the run's seconds rather
    than four sums; the same t applies. On AR(1) series (φ 0.5 and 0.8, 60 and
    300 s, 50 records a second, 1 000 each; ``benchmarks/statistics_coverage.py``)
    the intervals held the true p50 and p99 in 94.7–99.3 % (without the bound, in
    91.4–95.3 %: the p99 of 60 s at φ = 0.8 the lowest); at φ = 0.5, where the
    bound is most of the variance and still gets t on 3 degrees of freedom, they
    over-cover. The bound mostly widens the narrowest intervals: the median width
    grew by at most 7 %, but for the p99 of 300 s at φ = 0.5 by 19 %.

    Raises ValueError with fewer than ``MIN_SECTION_S`` (4) distinct seconds per
    section.
    """
    sec = np.asarray(second_of_record)
    lat = np.asarray(latency, np.float64)
    if sec.shape != lat.shape or sec.ndim != 1:
        raise ValueError(
            f"second_of_record and latency must be 1-D of equal length: {sec.shape}, {lat.shape}"
        )
    distinct, sec_index = np.unique(sec, return_inverse=True)
    if distinct.size < sections * MIN_SECTION_S:
        raise ValueError(
            f"need at least {sections * MIN_SECTION_S} seconds for {sections} sections of "
            f"{MIN_SECTION_S}, got {distinct.size}"
        )
    section = sec_index * sections // distinct.size
    t = float(stats.t.ppf(0.5 + LEVEL / 2, sections - 1))
    result = {}
    for q in qs:
        estimate = np.percentile(lat, q)
        below = (lat < estimate) + 0.5 * (lat == estimate) - q / 100
        sums = np.bincount(section, weights=below, minlength=sections)
        per_second = np.bincount(sec_index, weights=below)
        floor = np.sum(per_second**2) + 2 * np.dot(per_second[1:], per_second[:-1])
        se = math.sqrt(max(sections * np.var(sums, ddof=1), floor)) / lat.size
        shares = np.clip([q / 100 - t * se, q / 100 + t * se], 0.0, 1.0)
        lo, hi = np.percentile(lat, 100 * shares)
        result[q] = (float(lo), float(hi))
    return result


def percentile_intervals(second_of_record: np.ndarray, latency: np.ndarray) -> dict | None:
    """The ``confidence`` section of summary.json: 95 % intervals of p50 and p99 by
    :func:`percentile_interval`; None when the period is too short for its sections."""
    seconds = np.unique(np.asarray(second_of_record)).size
    try:
        bounds = percentile_interval(second_of_record, latency, (50.0, 99.0))
    except ValueError:
        return None
    return {
        "method": f"batch means over {SECTIONS} consecutive sections (at least the variance "
        f"of single and adjacent seconds), Woodruff interval, Student t ({SECTIONS - 1} df)",
        "level": LEVEL,
        "sections": SECTIONS,
        "section_s": round(seconds / SECTIONS, 1),
        "p50": [round(v, 3) for v in bounds[50.0]],
        "p99": [round(v, 3) for v in bounds[99.0]],
    }


def runs_interval(values: np.ndarray) -> Interval:
    """(median, lo, hi) of a metric measured once in each of N independent runs.

    lo–hi is the 95 % Student-t interval of the mean of the runs: it describes
    run-to-run variation (how far another set of N runs could land), not the
    precision within one run. With one run there is no variation to measure:
    (value, nan, nan).
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
