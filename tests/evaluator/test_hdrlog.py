"""latencies.hlog: the measured latencies read back from the HdrHistogram log agree with
latencies.parquet within the histogram's precision."""

import numpy as np
import pandas as pd

from evaluator.files import hdrlog
from evaluator.statistics.stats import describe

START_MS = 1_795_706_610_000


def _parquet(path, n=20_000, seed=3):
    """latencies.parquet's columns the log reads: 60 s of outputs, some outside the measured
    period, some no input explains, two negative (a measurement error)."""
    rng = np.random.default_rng(seed)
    latency = np.round(rng.lognormal(5.5, 0.6, n)).astype(np.int64)
    latency[:2] = -4
    frame = pd.DataFrame({
        "timestamp": START_MS + np.sort(rng.integers(0, 60_000, n)),
        "latency_ms": latency,
        "in_range": rng.random(n) > 0.1,
        "explained": rng.random(n) > 0.02,
    })  # fmt: skip
    frame.to_parquet(path, index=False)
    return frame


def test_the_log_reads_back_the_parquet_percentiles_within_its_precision(tmp_path):
    frame = _parquet(tmp_path / "latencies.parquet")
    timestamps, latencies = hdrlog.measured(tmp_path / "latencies.parquet")
    measured = frame[frame["in_range"] & frame["explained"]]
    assert np.array_equal(latencies, measured["latency_ms"].to_numpy())
    recorded = hdrlog.write(tmp_path / "latencies.hlog", timestamps, latencies, "run test")
    assert recorded == int((latencies >= 0).sum())  # the negative ones cannot be recorded

    histogram = hdrlog.read(tmp_path / "latencies.hlog")
    assert histogram.get_total_count() == recorded
    ordered = np.sort(latencies[latencies >= 0])
    exact = describe(ordered)  # summary.json's percentiles of these values
    for key, q in (("p50", 50.0), ("p99", 99.0)):
        read_ms = histogram.get_value_at_percentile(q) / hdrlog.NS_PER_MS
        # the log's percentile is an order statistic next to the interpolated one, within
        # the histogram's precision: the range of values it cannot tell apart
        rank = q / 100 * (ordered.size - 1)
        low, high = ordered[max(int(rank) - 1, 0)], ordered[min(int(rank) + 2, ordered.size - 1)]
        lowest = histogram.get_lowest_equivalent_value(int(low) * hdrlog.NS_PER_MS)
        highest = histogram.get_highest_equivalent_value(int(high) * hdrlog.NS_PER_MS)
        assert lowest <= read_ms * hdrlog.NS_PER_MS <= highest, (key, read_ms, exact[key])
        assert abs(read_ms - exact[key]) <= 0.01 * exact[key], key


def test_the_log_has_one_interval_a_second_in_the_standard_format(tmp_path):
    _parquet(tmp_path / "latencies.parquet", n=3_000)
    hdrlog.write(
        tmp_path / "latencies.hlog", *hdrlog.measured(tmp_path / "latencies.parquet"), "run x"
    )
    lines = (tmp_path / "latencies.hlog").read_text().splitlines()
    assert lines[0] == "#[stagebench: run x; latency in ns, broker clock]"
    assert "#[Histogram log format version 1.2]" in lines
    assert any(line.startswith(f"#[StartTime: {START_MS / 1000:.3f} ") for line in lines)
    intervals = [line for line in lines if line[0].isdigit()]
    assert len(intervals) == 60 and intervals[0].startswith("0.000000,1.000000,")
    assert all(",HISTF" in line for line in intervals)  # compressed V2 histograms


def test_a_run_without_measured_outputs_writes_an_empty_log(tmp_path):
    empty = np.zeros(0, np.int64)
    assert hdrlog.write(tmp_path / "latencies.hlog", empty, empty, "run y") == 0
    assert hdrlog.read(tmp_path / "latencies.hlog").get_total_count() == 0
