import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from evaluator.statistics.steady import (
    MIN_POINTS,
    SETTLE_WINDOWS,
    is_settled,
    level,
    settled_throughout,
    steady_state,
    trend,
    warmup_end,
)
from evaluator.text.caveats import steady_warnings
from stagebench.config.settings import RunConfig

EPOCH = 1_700_000_000.0


def ar1(rng: np.random.Generator, n: int, phi: float, sd: float) -> np.ndarray:
    """Stationary AR(1) noise with marginal sd ``sd``: per-second latency's wander."""
    shocks = rng.normal(0, sd * math.sqrt(1 - phi**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0, sd)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + shocks[i]
    return out


def warmup_series(seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """1000 ms decaying to 200 ms with a 10 s time constant, 2 ms noise."""
    s = np.arange(float(n))
    rng = np.random.default_rng(seed)
    return s, 200 + 800 * np.exp(-s / 10) + rng.normal(0, 2, n)


def test_flat_noisy_series_is_steady():
    rng = np.random.default_rng(1)
    t = EPOCH + np.arange(300.0)
    got = trend(t, 100 + rng.normal(0, 5, t.size))
    assert got.verdict == "steady"
    assert got.ci95[0] <= 0 <= got.ci95[1]
    assert got.mk_p > 0.05
    assert got.seconds == 300 and got.span_s == 299
    assert got.median_ms == pytest.approx(100, abs=1)


def test_the_change_is_the_slope_interval_over_the_span_against_the_tolerance():
    rng = np.random.default_rng(1)
    s = np.arange(120.0)
    got = trend(s, 200 + rng.normal(0, 5, s.size), tolerance=0.05)
    assert got.change_ms[0] == pytest.approx(got.ci95[0] / 60 * 119)
    assert got.change_ms[1] == pytest.approx(got.ci95[1] / 60 * 119)
    assert got.allowed_ms == pytest.approx(0.05 * got.median_ms)


def test_rising_60_ms_per_min_is_rising_with_the_right_slope():
    rng = np.random.default_rng(2)
    t = EPOCH + np.arange(120.0)
    got = trend(t, 100 + (t - EPOCH) * 1.0 + rng.normal(0, 2, t.size))
    assert got.verdict == "rising"
    assert got.slope_ms_per_min == pytest.approx(60, rel=0.1)
    assert got.ci95[0] < 60 < got.ci95[1]
    assert got.mk_p < 1e-6


def test_decreasing_series_is_falling():
    s, v = warmup_series(seed=3)
    got = trend(s[:30], v[:30])
    assert got.verdict == "falling"
    assert got.slope_ms_per_min < 0


def test_a_real_but_negligible_slope_is_steady():
    # 2 % over the period: its interval excludes 0, but lies within ±10 %
    rng = np.random.default_rng(4)
    s = np.arange(120.0)
    v = 200 * (1 + 0.02 * s / 119) + rng.normal(0, 0.5, s.size)
    got = trend(s, v)
    assert got.ci95[0] > 0
    assert got.verdict == "steady"
    assert trend(s, v, tolerance=0.001).verdict == "rising"


def test_an_interval_that_straddles_the_tolerance_is_undetermined():
    # a drift of about the tolerance in a noisy minute: neither steady nor rising is shown
    rng = np.random.default_rng(5)
    s = np.arange(60.0)
    got = trend(s, 100 * (1 + 0.1 * s / 59 + ar1(rng, s.size, 0.8, 0.05)))
    low, high = got.change_ms
    assert low < got.allowed_ms < high
    assert got.verdict == "undetermined"


def test_autocorrelation_widens_the_interval_and_weakens_the_test():
    # the same points, in time order (autocorrelated) and shuffled (independent)
    rng = np.random.default_rng(6)
    s = np.arange(120.0)
    v = 100 * (1 + ar1(rng, s.size, 0.8, 0.1))
    ordered, shuffled = trend(s, v), trend(s, rng.permutation(v))
    width = np.diff(ordered.ci95)[0]
    assert width > 2 * np.diff(shuffled.ci95)[0]
    assert ordered.mk_p > stats.kendalltau(s, v).pvalue


def test_autocorrelated_seconds_are_worth_fewer_independent_ones():
    rng = np.random.default_rng(11)
    s = np.arange(60.0)
    independent = [trend(s, 100 + rng.normal(0, 5, s.size)).effective_seconds for _ in range(20)]
    wandering = [trend(s, 100 * (1 + ar1(rng, s.size, 0.9, 0.1))).effective_seconds
                 for _ in range(20)]  # fmt: skip
    assert np.median(independent) > 40 and np.median(wandering) < 15
    got = steady_state(s, 100 + rng.normal(0, 5, s.size))
    assert 1 <= got["effective_seconds"] <= got["seconds"]


def test_independent_minutes_are_seldom_worth_only_a_few_seconds():
    # over a minute the lag-2/lag-1 ratio is noisy; unbounded by the series' length, a φ
    # near 1 that noise produced made 16 of these 300 minutes worth fewer than 5 seconds
    rng = np.random.default_rng(2026)
    s = np.arange(60.0)
    worth = np.array([trend(s, np.round(rng.normal(100, 10, s.size))).effective_seconds
                      for _ in range(300)])  # fmt: skip
    assert np.count_nonzero(worth < 5) <= 2
    assert np.count_nonzero(worth < 10) <= 12


def test_an_undetermined_trend_says_what_its_seconds_are_worth():
    # why its interval can be far wider than the latency ever moved
    rng = np.random.default_rng(5)
    s = np.arange(60.0)
    steady = steady_state(s, 100 * (1 + 0.1 * s / 59 + ar1(rng, s.size, 0.8, 0.05)))
    assert steady["verdict"] == "undetermined"
    worth = max(round(steady["effective_seconds"]), 1)
    (warning,) = steady_warnings(steady)
    assert f"(95 % interval; 60 seconds with outputs, worth about {worth} independent" in warning
    # a summary written before the worth was recorded reads as it did
    older = {k: v for k, v in steady.items() if k != "effective_seconds"}
    (warning,) = steady_warnings(older)
    assert "over the measured period (95 % interval), not all within" in warning


def test_the_slope_interval_covers_on_autocorrelated_series():
    # the coverage benchmarks/statistics_coverage.py measures, on fewer seeded series
    hits = Counter()
    for phi, n in ((0.5, 60), (0.8, 60), (0.8, 300)):
        rng = np.random.default_rng([7, n, int(phi * 10)])
        s = np.arange(float(n))
        for _ in range(100):
            low, high = trend(s, 100 * (1 + ar1(rng, n, phi, 0.1))).ci95
            hits[(phi, n)] += low <= 0 <= high
    assert all(h >= 93 for h in hits.values()), hits


def test_the_level_interval_covers_the_median_of_autocorrelated_series():
    # a level's median wandering AR(1) with noise of its own, as after a fault
    hits = Counter()
    for phi, n in ((0.0, 60), (0.5, 60), (0.8, 60)):
        rng = np.random.default_rng([9, n, int(phi * 10)])
        s = np.arange(float(n))
        for _ in range(200):
            y = 300 * (1 + ar1(rng, n, phi, 0.1) + rng.normal(0, 0.05, n))
            low, high = level(s, y).ci95
            hits[phi] += low <= 300 <= high
    assert all(h >= 180 for h in hits.values()), hits  # 90 %


def test_wander_widens_the_level_interval():
    rng = np.random.default_rng(4)
    s = np.arange(60.0)
    independent = level(s, 300 + rng.normal(0, 30, 60))
    wandering = level(s, 300 + 30 * ar1(rng, 60, 0.8, 1.0))
    assert independent.effective_seconds > 40 > 20 > wandering.effective_seconds
    assert np.diff(wandering.ci95)[0] > np.diff(independent.ci95)[0]
    with pytest.raises(ValueError, match="at least"):
        level(s[:4], s[:4])


def test_settled_throughout_cuts_the_whole_stretch_into_windows():
    s = np.arange(30.0)
    assert settled_throughout(s, np.full(30, 100.0))
    # the last third 15 % higher: its median disagrees
    assert not settled_throughout(s, np.r_[np.full(20, 100.0), np.full(10, 115.0)])
    # 14 seconds: a window of fewer than MIN_POINTS
    assert not settled_throughout(s[:14], np.full(14, 100.0))


def test_a_stationary_autocorrelated_series_is_seldom_called_rising_or_falling():
    calls = Counter()
    for jitter, n in ((0.03, 60), (0.1, 60), (0.1, 300)):
        rng = np.random.default_rng([8, n, int(jitter * 100)])
        s = np.arange(float(n))
        calls.update(trend(s, 100 * (1 + ar1(rng, n, 0.8, jitter))).verdict for _ in range(100))
    assert calls["rising"] + calls["falling"] <= 0.1 * 300, calls
    # quiet enough, it is shown steady; too noisy for its length, undetermined
    assert calls["steady"] > 25 and calls["undetermined"] > 150


def test_a_20_percent_rise_over_the_period_is_not_called_steady():
    calls = Counter()
    for jitter, n in ((0.03, 60), (0.03, 300), (0.1, 60)):
        rng = np.random.default_rng([9, n, int(jitter * 100)])
        s = np.arange(float(n))
        rise = 1 + 0.2 * s / (n - 1)
        calls.update(trend(s, 100 * (rise + ar1(rng, n, 0.8, jitter))).verdict for _ in range(100))
    assert calls["steady"] <= 0.1 * 300, calls
    assert calls["rising"] > 100


def test_steady_state_is_the_summary_section():
    rng = np.random.default_rng(10)
    s = np.arange(60.0)
    v = 4000 * (1 + 0.0025 * s) + rng.normal(0, 10, s.size)  # 15 % over the minute
    got = steady_state(s, v)
    assert got["verdict"] == "rising"
    assert got["tolerance"] == 0.10 and got["span_s"] == 59 and got["seconds"] == 60
    assert got["allowed_ms"] == pytest.approx(0.1 * got["median_ms"], abs=1e-3)
    assert got["change_ms"][0] > got["allowed_ms"]
    assert steady_state(s, v, tolerance=0.5)["verdict"] == "steady"
    assert steady_state(s[:4], v[:4]) is None


def test_settling_needs_the_windows_medians_alike():
    rng = np.random.default_rng(11)
    s = np.arange(181.0)
    flat = 100 + rng.normal(0, 2, s.size)
    assert is_settled(s, flat)
    # three flat minutes, each 15 % below the one before: no window moves, the level does
    steps = flat * 0.85 ** (s // 60)
    assert not is_settled(s, steps)
    assert is_settled(s, steps, windows=1)


def test_millisecond_latencies_a_tick_apart_have_settled_but_two_ticks_have_not():
    # the floor: whole-millisecond p50s, 10 % of whose median is under one tick
    s = np.arange(31.0)
    one_tick = np.repeat([1.0, 2.0, 1.0, 1.0], [11, 10, 5, 5])
    assert is_settled(s, one_tick, window_s=10)
    two_ticks = np.repeat([1.0, 3.0, 1.0, 1.0], [11, 10, 5, 5])
    assert not is_settled(s, two_ticks, window_s=10)


def test_is_settled_needs_its_windows_in_full():
    span = SETTLE_WINDOWS * 60
    assert is_settled(np.arange(float(span)), np.full(span, 100.0)) is False
    assert is_settled(np.arange(span + 1.0), np.full(span + 1, 100.0)) is True  # not np.bool_


def test_a_15_percent_per_minute_fall_seldom_ends_the_warm_up():
    # the runner's looks: every 2 s from 240 to 300 s; the fall never stops
    s = np.arange(301.0)
    ended = 0
    rng = np.random.default_rng(12)
    for _ in range(30):
        v = 1000 * 0.85 ** (s / 60) * (1 + ar1(rng, s.size, 0.8, 0.1))
        ended += any(is_settled(s[s <= t], v[s <= t]) for t in range(240, 301, 2))
    assert ended <= 2


def _warm_end(s: np.ndarray, v: np.ndarray) -> int | None:
    """When the runner, looking every 2 s from 30 s, ends a warmed-up run's warm-up."""
    window = RunConfig(stage="join").warm_settle_window_s
    return next((t for t in range(30, 301, 2) if is_settled(s[s <= t], v[s <= t], window)), None)


def test_the_short_windows_seldom_end_a_15_s_start_early():
    # benchmarks/statistics_coverage.py's warm_start on fewer seeded series: twice the level,
    # decaying with a 15 s time constant, a wander of 10 %; with the default windows
    s = np.arange(301.0)
    excess = np.exp(-s / 15)
    rng = np.random.default_rng(15)
    ends = [_warm_end(s, 1000 * (1 + excess) * (1 + ar1(rng, s.size, 0.8, 0.1))) for _ in range(60)]
    assert sum(end is not None and excess[end] > 0.05 for end in ends) <= 5


def test_the_short_windows_do_not_wait_on_a_flat_series_own_wander():
    # ingest's per-second p50: about 30 ms in whole milliseconds, wandering by 14 %
    s = np.arange(301.0)
    rng = np.random.default_rng(16)
    ends = [_warm_end(s, np.round(30 * (1 + ar1(rng, s.size, 0.7, 0.14)))) for _ in range(60)]
    assert np.median([300 if end is None else end for end in ends]) <= 60


def test_warmup_end_after_the_decay():
    s, v = warmup_series(seed=5)
    end = warmup_end(s, v)
    assert end is not None
    # the decay's tail leaves the earliest of the three windows some 30 s in
    assert SETTLE_WINDOWS * 60 < end <= 240


def test_warmup_end_of_a_flat_series_is_the_first_full_span():
    rng = np.random.default_rng(13)
    t = EPOCH + np.arange(240.0)
    assert warmup_end(t, 100 + rng.normal(0, 2, t.size)) == EPOCH + SETTLE_WINDOWS * 60


def test_warmup_end_none_while_still_falling():
    s, v = warmup_series(seed=6, n=200)
    assert warmup_end(s, v, windows=1) is not None
    assert warmup_end(s, 1000 * 0.85 ** (s / 60)) is None


def test_is_settled_polled_live_agrees_with_warmup_end():
    s, v = warmup_series(seed=7)
    polled = [t for t in s[::5] if is_settled(s[s <= t], v[s <= t])]
    assert polled[0] == warmup_end(s, v)


def test_too_few_points_raise():
    with pytest.raises(ValueError, match=f"need at least {MIN_POINTS} seconds"):
        trend(np.arange(4.0), np.arange(4.0))


def test_nan_seconds_are_dropped_and_gaps_allowed():
    s = np.array([0, 1, 2, 5, 6, 9, 10, 11], dtype=float)
    v = np.array([10, np.nan, 12, 15, np.nan, 19, 20, 21], dtype=float)
    got = trend(s, v)
    assert got.seconds == 6 and got.span_s == 11
    assert got.slope_ms_per_min == pytest.approx(60)
    with pytest.raises(ValueError, match=f"need at least {MIN_POINTS}"):
        trend(s[:6], v[:6])


def test_seconds_must_increase():
    with pytest.raises(ValueError, match="increase"):
        trend(np.array([0, 1, 2, 2, 3, 4.0]), np.ones(6))


def test_constant_series_is_steady_with_no_trend():
    got = trend(np.arange(10.0), np.full(10, 50.0))
    assert got.verdict == "steady"
    assert got.mk_p == 1.0


def test_a_sub_millisecond_series_settles_at_the_clock_resolution():
    # the floor: whole milliseconds around 0–2 ms, whose 10 % would be a tenth of one
    rng = np.random.default_rng(14)
    s = np.arange(181.0)
    v = rng.choice([0.0, 1.0, 1.0, 1.0, 2.0], s.size)
    assert is_settled(s, v)
    assert not is_settled(s, 0.05 * s)  # 3 ms across each window: a trend
