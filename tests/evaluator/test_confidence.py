import math
import time

import numpy as np
import pytest
from scipy import stats

from evaluator.confidence import (
    _block_draw,
    _weighted_percentile,
    block_bootstrap,
    difference_interval,
    runs_interval,
    significant,
)

MEAN, SD_LEVEL, SD_RECORD = 100.0, 10.0, 10.0
# Each record is the per-second level plus its own noise, both normal: the marginal is normal.
TRUE = {q: MEAN + stats.norm.ppf(q / 100) * math.hypot(SD_LEVEL, SD_RECORD) for q in (50.0, 99.0)}


def ar1_records(
    seed: int, n_sec: int, per_sec: int, phi: float = 0.8
) -> tuple[np.ndarray, np.ndarray]:
    """Stationary AR(1) per-second level (sd SD_LEVEL) plus independent record noise."""
    rng = np.random.default_rng(seed)
    shocks = rng.normal(0, SD_LEVEL * math.sqrt(1 - phi**2), n_sec)
    level = np.empty(n_sec)
    level[0] = rng.normal(0, SD_LEVEL)
    for i in range(1, n_sec):
        level[i] = phi * level[i - 1] + shocks[i]
    second = np.repeat(np.arange(n_sec), per_sec)
    latency = MEAN + level[second] + rng.normal(0, SD_RECORD, second.size)
    return second + 1_700_000_000, latency


def naive_bootstrap(latency: np.ndarray, q: float, n_boot: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    reps = [np.percentile(rng.choice(latency, latency.size), q) for _ in range(n_boot)]
    lo, hi = np.percentile(reps, [2.5, 97.5])
    return float(lo), float(hi)


@pytest.mark.parametrize("q", [0.0, 1.0, 37.5, 50.0, 99.0, 100.0])
def test_weighted_percentile_is_numpy_linear_on_the_repeated_sample(q):
    rng = np.random.default_rng(0)
    values = np.sort(rng.normal(0, 1, 200))
    weights = rng.integers(0, 4, values.size)
    got = _weighted_percentile(values, np.cumsum(weights), (q,))
    assert got[0] == pytest.approx(np.percentile(np.repeat(values, weights), q))


def test_a_block_draw_is_runs_of_consecutive_seconds_over_the_whole_run():
    rng = np.random.default_rng(0)
    draws = [_block_draw(rng, n_sec=23, block=5) for _ in range(200)]
    assert all(d.size == 23 for d in draws)
    for d in draws:
        # Five blocks of five, cut to 23: the first four are whole.
        assert np.all(np.diff(d[:20].reshape(4, 5), axis=1) == 1)
    assert set(np.concatenate(draws)) == set(range(23))


def test_block_interval_contains_the_true_percentiles():
    # One interval misses about one time in ten (see the coverage test below).
    second, latency = ar1_records(seed=0, n_sec=300, per_sec=100, phi=0.5)
    got = block_bootstrap(second, latency)
    assert set(got) == {50.0, 99.0}
    for q, (lo, hi) in got.items():
        assert lo < np.percentile(latency, q) < hi
        assert lo <= TRUE[q] <= hi


def test_blocks_are_wider_than_a_per_record_bootstrap():
    second, latency = ar1_records(seed=2, n_sec=300, per_sec=100)
    lo, hi = block_bootstrap(second, latency, qs=(50.0,))[50.0]
    naive_lo, naive_hi = naive_bootstrap(latency, 50.0, n_boot=200, seed=2)
    assert hi - lo > 5 * (naive_hi - naive_lo)


def test_blocks_cover_the_truth_far_more_often_than_records():
    n, block_hits, naive_hits = 30, 0, 0
    for seed in range(n):
        second, latency = ar1_records(seed=seed, n_sec=120, per_sec=50, phi=0.5)
        lo, hi = block_bootstrap(second, latency, qs=(50.0,), n_boot=300, seed=seed)[50.0]
        block_hits += lo <= TRUE[50.0] <= hi
        naive_lo, naive_hi = naive_bootstrap(latency, 50.0, n_boot=100, seed=seed)
        naive_hits += naive_lo <= TRUE[50.0] <= naive_hi
    assert block_hits >= 0.75 * n
    assert naive_hits <= 0.4 * n


def test_same_seed_same_interval():
    second, latency = ar1_records(seed=3, n_sec=60, per_sec=50)
    first = block_bootstrap(second, latency, n_boot=200, seed=7)
    assert block_bootstrap(second, latency, n_boot=200, seed=7) == first
    assert block_bootstrap(second, latency, n_boot=200, seed=8) != first


def test_too_few_seconds_for_two_blocks():
    second, latency = ar1_records(seed=4, n_sec=9, per_sec=10)
    with pytest.raises(ValueError, match="need at least 10 seconds for 5 s blocks"):
        block_bootstrap(second, latency)
    with pytest.raises(ValueError, match="need at least 8 seconds for 4 s blocks, got 7"):
        block_bootstrap(second[:70], latency[:70], block_s=4)


def test_300_seconds_of_400_records_in_under_3_s():
    second, latency = ar1_records(seed=5, n_sec=300, per_sec=400)
    start = time.perf_counter()
    block_bootstrap(second, latency, n_boot=1000)
    assert time.perf_counter() - start < 3.0


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
    assert not significant(difference_interval((42.0, lo, hi), (90.0, 85.0, 95.0)))
    with pytest.raises(ValueError):
        runs_interval(np.array([]))


def test_difference_is_b_minus_a_with_the_normal_approximation():
    se = 20 / (2 * stats.norm.ppf(0.975))
    estimate, lo, hi = difference_interval((100.0, 90.0, 110.0), (130.0, 120.0, 140.0))
    assert estimate == 30.0
    assert hi - estimate == pytest.approx(stats.norm.ppf(0.975) * math.sqrt(2) * se)
    assert estimate - lo == pytest.approx(hi - estimate)
    assert lo == pytest.approx(30 - 20 * math.sqrt(2) / 2)


def test_significance_follows_the_sign_and_the_overlap():
    a = (100.0, 90.0, 110.0)
    assert significant(difference_interval(a, (130.0, 120.0, 140.0)))
    falling = difference_interval(a, (70.0, 60.0, 80.0))
    assert falling[0] == -30.0 and significant(falling)
    assert not significant(difference_interval(a, (105.0, 95.0, 115.0)))
    assert not significant((1.0, -0.5, 2.5))
    assert significant((1.0, 0.5, 1.5))
