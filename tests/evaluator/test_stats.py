import numpy as np
import pytest

from evaluator.statistics.stats import PERCENTILES, STAT_KEYS, describe, timeseries


def test_percentiles_of_1_to_100_are_exact_linear():
    got = describe(np.arange(1, 101))
    assert got["count"] == 100
    assert got["mean"] == 50.5
    assert got["min"] == 1 and got["max"] == 100
    # linear interpolation: p = 1 + (n − 1) · q / 100
    assert got["p50"] == 50.5
    assert got["p1"] == pytest.approx(1.99)
    assert got["p99"] == pytest.approx(99.01)
    assert got["p99_9"] == pytest.approx(99.901)
    assert got["p99_99"] == pytest.approx(99.9901)


def test_keys_and_empty():
    assert set(describe(np.array([5]))) == set(STAT_KEYS)
    assert list(PERCENTILES)[-2:] == ["p99_9", "p99_99"]
    empty = describe(np.array([], dtype=np.int64))
    assert empty["count"] == 0
    assert all(empty[k] is None for k in STAT_KEYS if k != "count")


def test_negative_values_are_kept():
    got = describe(np.array([-5, 10, 20]))
    assert got["min"] == -5
    assert got["mean"] == pytest.approx(25 / 3)


def test_timeseries_per_second_with_gaps():
    out_ts = np.array([10_000, 10_500, 10_999, 12_100])
    latency = np.array([1, 3, 5, 100])
    in_ts = np.array([9_900, 10_100, 10_200, 12_000])
    ts = timeseries(out_ts, latency, in_ts)
    assert ts["second"].tolist() == [9, 10, 11, 12]
    assert ts["input_count"].tolist() == [1, 2, 0, 1]
    assert ts["output_count"].tolist() == [0, 3, 0, 1]
    assert ts.loc[ts["second"] == 10, "latency_p50_ms"].item() == 3
    assert ts.loc[ts["second"] == 12, "latency_p99_ms"].item() == 100
    assert np.isnan(ts.loc[ts["second"] == 11, "latency_p50_ms"].item())


def test_grouped_percentiles_equal_numpy_per_group():
    from evaluator.statistics.stats import grouped_percentiles

    rng = np.random.default_rng(7)
    keys = rng.integers(0, 20, 5000)
    values = rng.integers(-50, 5000, 5000)
    got_keys, counts, qs = grouped_percentiles(keys, values, (0.0, 50.0, 99.0, 100.0))
    for i, k in enumerate(got_keys):
        group = values[keys == k]
        assert counts[i] == group.size
        assert qs[:, i].tolist() == pytest.approx(np.percentile(group, [0, 50, 99, 100]).tolist())
