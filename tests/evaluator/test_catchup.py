import numpy as np
import pandas as pd
import pytest

from evaluator.latencies.catchup import catch_up

EPOCH_S = 1_700_000_000


def series(p50: np.ndarray) -> pd.DataFrame:
    seconds = EPOCH_S + np.arange(p50.size)
    counts = np.where(np.isnan(p50), 0, 400)
    return pd.DataFrame({"second": seconds, "output_count": counts, "latency_p50_ms": p50})


def backlog(catch_up_at: int, tail: int, seed: int = 1) -> np.ndarray:
    """Outputs 300 s old at the job's start, fresher by 5 s each second, then 100 ms."""
    rng = np.random.default_rng(seed)
    falling = 300_000 - 5_000 * np.arange(catch_up_at)
    return np.concatenate([np.maximum(falling, 100.0), 100 + rng.normal(0, 5, tail)])


def test_catch_up_is_when_the_latency_reaches_the_live_p50():
    got = catch_up(series(backlog(60, 60)), job_started_ms=EPOCH_S * 1000)
    assert got["caught_up"] is True
    assert got["live_p50_ms"] == pytest.approx(100, abs=3)
    assert got["caught_up_s"] == 60


def test_the_job_start_counts_even_between_seconds():
    got = catch_up(series(backlog(60, 60)), job_started_ms=EPOCH_S * 1000 + 10_500)
    assert got["caught_up_s"] == pytest.approx(49.5)


def test_one_fresh_second_is_not_a_catch_up():
    p50 = backlog(60, 60)
    p50[30] = 100.0  # a lucky second in the backlog
    assert catch_up(series(p50), job_started_ms=EPOCH_S * 1000)["caught_up_s"] == 60


def test_seconds_without_outputs_neither_count_nor_break():
    p50 = backlog(60, 60)
    p50[61] = np.nan
    assert catch_up(series(p50), job_started_ms=EPOCH_S * 1000)["caught_up_s"] == 60


def test_a_run_ending_in_the_backlog_has_not_caught_up():
    still = 300_000 - 1_000 * np.arange(90.0)  # never reaches a live latency
    got = catch_up(series(still), job_started_ms=EPOCH_S * 1000)
    assert got == {"live_p50_ms": pytest.approx(still[-20:].mean(), rel=0.01),
                   "caught_up_s": None, "caught_up": False}  # fmt: skip


def test_too_few_seconds_tell_nothing():
    got = catch_up(series(np.array([100.0, 90, 80])), job_started_ms=EPOCH_S * 1000)
    assert got == {"live_p50_ms": None, "caught_up_s": None, "caught_up": None}
