import math

import numpy as np
import pytest
from scipy import stats

from evaluator.statistics.confidence import (
    MIN_SECTION_S,
    SECTIONS,
    percentile_interval,
    percentile_intervals,
    runs_interval,
)

MEAN, SD_LEVEL, SD_RECORD = 100.0, 10.0, 10.0
# Each record is the per-second level plus its own noise, both normal: the marginal is normal.
TRUE = {q: MEAN + stats.norm.ppf(q / 100) * math.hypot(SD_LEVEL, SD_RECORD) for q in (50.0, 99.0)}


def ar1_records(
    rng: np.random.Generator, n_sec: int, per_sec: int, phi: float = 0.8
) -> tuple[np.ndarray, np.ndarray]:
    """Stationary AR(1) per-second level (sd SD_LEVEL) plus independent record noise."""
    shocks = rng.normal(0, SD_LEVEL * math.sqrt(1 - phi**2), n_sec)
    level = np.empty(n_sec)
    level[0] = rng.normal(0, SD_LEVEL)
    for i in range(1, n_sec):
        level[i] = phi * level[i - 1] + shocks[i]
    second = np.repeat(np.arange(n_sec), per_sec)
    latency = MEAN + level[second] + rng.normal(0, SD_RECORD, second.size)
    return second + 1_700_000_000, latency


def test_interval_contains_the_estimate_and_the_truth():
    second, latency = ar1_records(np.random.default_rng(0), 300, 100, phi=0.5)
    got = percentile_interval(second, latency)
    assert set(got) == {50.0, 99.0}
    for q, (lo, hi) in got.items():
        assert lo < np.percentile(latency, q) < hi
        assert lo <= TRUE[q] <= hi


@pytest.mark.parametrize(("phi", "n_sec"), [(0.5, 60), (0.8, 300)])
def test_intervals_cover_the_true_percentiles_on_autocorrelated_series(phi, n_sec):
    # the coverage benchmarks/statistics_coverage.py measures, on fewer seeded series
    rng = np.random.default_rng([1, n_sec, int(phi * 10)])
    hits = {50.0: 0, 99.0: 0}
    for _ in range(200):
        bounds = percentile_interval(*ar1_records(rng, n_sec, 20, phi))
        for q, (lo, hi) in bounds.items():
            hits[q] += lo <= TRUE[q] <= hi
    assert hits[50.0] >= 0.93 * 200 and hits[99.0] >= 0.93 * 200, hits


def test_the_p99_of_a_strongly_autocorrelated_minute_is_covered():
    # few records past the p99 per section: four batch means alone covered it in 91 %
    rng = np.random.default_rng([0, 60, 8])
    hits = 0
    for _ in range(1000):
        lo, hi = percentile_interval(*ar1_records(rng, 60, 50), qs=(99.0,))[99.0]
        hits += lo <= TRUE[99.0] <= hi
    assert hits >= 0.93 * 1000, hits


def test_sections_that_agree_by_chance_leave_the_seconds_spread():
    # a 2 s burst in every section: the four sums are equal, their spread is 0
    burst = np.repeat([200.0, 200.0, 100.0, 100.0], 10) + np.tile(np.arange(10.0), 4)
    latency = np.tile(burst, 4)
    second = np.repeat(np.arange(16), 10)
    lo, hi = percentile_interval(second, latency, qs=(50.0,))[50.0]
    # the median (154.5, between the two levels) could as well lie within either
    assert lo < 110 and hi > 200


def test_autocorrelation_makes_it_far_wider_than_independent_records_would():
    second, latency = ar1_records(np.random.default_rng(2), 300, 100)
    lo, hi = percentile_interval(second, latency, qs=(50.0,))[50.0]
    # Woodruff's interval for independent records: p ± 1.96·√(p(1 − p)/N)
    share = 1.96 * math.sqrt(0.25 / latency.size)
    naive_lo, naive_hi = np.percentile(latency, [100 * (0.5 - share), 100 * (0.5 + share)])
    assert hi - lo > 5 * (naive_hi - naive_lo)


def test_a_skewed_tail_gets_an_asymmetric_interval():
    rng = np.random.default_rng(3)
    second = np.repeat(np.arange(120), 200)
    latency = rng.lognormal(3, 0.6, second.size)
    lo, hi = percentile_interval(second, latency, qs=(99.0,))[99.0]
    estimate = np.percentile(latency, 99)
    assert hi - estimate > estimate - lo


def test_whole_millisecond_ties_at_the_median_are_split():
    # most records sit at the median: its share is uncertain, its value is not
    second = np.repeat(np.arange(60), 10)
    latency = np.full(second.size, 31.0)
    latency[::7] = 30.0
    latency[::11] = 33.0
    lo, hi = percentile_interval(second, latency, qs=(50.0,))[50.0]
    assert lo == hi == 31.0


def test_each_section_weighs_by_its_records():
    # one busy section of high latency: the sections' sums weigh records, not seconds
    second = np.repeat(np.arange(40), [100] * 10 + [10] * 30)
    rng = np.random.default_rng(4)
    latency = np.where(second < 10, 200.0, 100.0) + rng.normal(0, 1, second.size)
    lo, hi = percentile_interval(second, latency, qs=(50.0,))[50.0]
    assert lo < np.percentile(latency, 50) < hi
    assert hi > 150  # the busy section could have held the median


def test_too_few_seconds_for_the_sections():
    second, latency = ar1_records(np.random.default_rng(5), SECTIONS * MIN_SECTION_S - 1, 10)
    with pytest.raises(ValueError, match=f"need at least {SECTIONS * MIN_SECTION_S} seconds"):
        percentile_interval(second, latency)
    assert percentile_intervals(second, latency) is None
    with pytest.raises(ValueError, match="equal length"):
        percentile_interval(second, latency[1:])


def test_the_summary_section():
    second, latency = ar1_records(np.random.default_rng(6), 60, 50)
    got = percentile_intervals(second, latency)
    assert got["level"] == 0.95 and got["sections"] == SECTIONS and got["section_s"] == 15.0
    assert "Woodruff" in got["method"] and "adjacent seconds" in got["method"]
    assert got["p50"][0] < got["p50"][1] < got["p99"][1]


def test_runs_interval_is_the_t_interval_of_the_mean_around_the_median():
    median, lo, hi = runs_interval(np.array([10.0, 11.0, 15.0]))
    # mean 12, sd √7, t(0.975, 2) = 4.302653
    half = 4.302653 * math.sqrt(7) / math.sqrt(3)
    assert median == 11.0
    assert lo == pytest.approx(12 - half, rel=1e-6)
    assert hi == pytest.approx(12 + half, rel=1e-6)


def test_one_run_has_no_interval():
    median, lo, hi = runs_interval(np.array([42.0]))
    assert median == 42.0 and math.isnan(lo) and math.isnan(hi)
    with pytest.raises(ValueError):
        runs_interval(np.array([]))
