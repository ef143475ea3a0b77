"""The measured latencies as an HdrHistogram log (``latencies.hlog``) beside latencies.parquet.

The tools people already use for latency (HistogramLogAnalyzer, HistogramLogProcessor,
the HdrHistogram plotters) read this format, not parquet. The log holds one interval
histogram per broker second of the outputs' own append time, the grouping of
timeseries.csv, over the measured outputs that summary.json's percentiles are taken
from (in the measured period, explained by an input). Values are recorded in
nanoseconds, the unit those tools assume by default (their output ratio of 10^6 prints
milliseconds); the latencies themselves are whole milliseconds of the broker clock.
A histogram keeps :data:`SIGNIFICANT_FIGURES` digits and its unit is 2^19 ns (the
power of two under :data:`LOWEST_NS`), so a value read from the log is within half a
millisecond of the recorded one below a second, and within 0.1 % above. Negative
latencies, impossible on one clock and counted in summary.json as a measurement error,
cannot be recorded and are left out.
"""

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader, HistogramLogWriter

from evaluator.latencies.latency import EXPLAINED, IN_RANGE, LATENCY
from evaluator.topics.reader import TIMESTAMP
from ground import files
from ground.contract import SECOND_MS
from ground.errors import FileError

NS_PER_MS = 1_000_000
SIGNIFICANT_FIGURES = 3
LOWEST_NS = NS_PER_MS
"""The smallest value told apart from 0: the latencies are whole milliseconds."""
HIGHEST_NS = 86_400_000 * NS_PER_MS
"""A day; a histogram of longer latencies is made to fit its largest."""


def new_histogram(highest_ns: int = HIGHEST_NS) -> HdrHistogram:
    return HdrHistogram(LOWEST_NS, max(highest_ns, HIGHEST_NS), SIGNIFICANT_FIGURES)


def measured(parquet: Path) -> tuple[np.ndarray, np.ndarray]:
    """The measured outputs' append times and latencies (ms) from latencies.parquet, four
    columns read; FileError naming it when it is not such a file (cut short, corrupt)."""
    try:
        table = pq.read_table(
            parquet,
            columns=[TIMESTAMP.lstrip("_"), LATENCY],
            filters=[(IN_RANGE, "=", True), (EXPLAINED, "=", True)],
        )
    except (pa.ArrowException, OSError) as err:
        raise FileError(
            f"{parquet} cannot be read as a run's latencies ({str(err).splitlines()[0]}); "
            "stagebench evaluate --force writes it again from the run's topics"
        ) from err
    return (
        table.column(0).to_numpy().astype(np.int64, copy=False),
        table.column(1).to_numpy().astype(np.int64, copy=False),
    )


def write(path: Path, timestamps_ms: np.ndarray, latencies_ms: np.ndarray, label: str) -> int:
    """Write the log of these outputs to ``path``; the number of latencies recorded.

    ``label`` goes into the log's comment line (the run it is of)."""
    keep = latencies_ms >= 0
    seconds = np.asarray(timestamps_ms)[keep] // SECOND_MS
    values = np.asarray(latencies_ms)[keep]
    with files.replacing(path) as out:
        writer = HistogramLogWriter(out)
        writer.output_comment(f"[stagebench: {label}; latency in ns, broker clock]")
        writer.output_log_format_version()
        if values.size:
            base_ms = int(seconds.min()) * SECOND_MS
            start = datetime.fromtimestamp(base_ms / 1000, UTC).isoformat()
            writer.output_comment(
                f"[StartTime: {base_ms / 1000:.3f} (seconds since epoch), {start}]"
            )
            writer.output_base_time(base_ms)
            writer.base_time = base_ms
        writer.output_legend()
        if values.size:
            _intervals(writer, seconds, values)
    return int(values.size)


def _intervals(writer: HistogramLogWriter, seconds: np.ndarray, values: np.ndarray) -> None:
    """One interval histogram per second, from the distinct (second, latency) pairs and
    their counts: a record call per distinct value, not per output."""
    highest = int(values.max()) * NS_PER_MS
    packed = (seconds - seconds.min()) << 32 | values
    pairs, counts = np.unique(packed, return_counts=True)
    offsets, latency = pairs >> 32, pairs & 0xFFFFFFFF
    bounds = np.flatnonzero(np.diff(offsets)) + 1
    for chunk in np.split(np.arange(pairs.size), bounds):
        histogram = new_histogram(highest)
        for value, count in zip(latency[chunk], counts[chunk], strict=True):
            histogram.record_value(int(value) * NS_PER_MS, int(count))
        start_ms = (int(seconds.min()) + int(offsets[chunk[0]])) * SECOND_MS
        histogram.set_start_time_stamp(start_ms)
        histogram.set_end_time_stamp(start_ms + SECOND_MS)
        writer.output_interval_histogram(histogram, max_value_unit_ratio=NS_PER_MS)


def read(path: Path) -> HdrHistogram:
    """All intervals of a log added into one histogram (values in ns, up to a day)."""
    total = new_histogram()
    reader = HistogramLogReader(str(path), new_histogram())
    try:
        while reader.add_next_interval_histogram(total):
            pass
    finally:
        reader.input_file.close()
    return total
