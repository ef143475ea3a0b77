"""Exact latency statistics and per-second time series.

Percentiles are computed with numpy on every value (no sampling, no sketches),
``method="linear"`` (numpy's default; Spark's ``percentile`` interpolates the
same way). Keys of a statistics dict::

    count, mean, min, p1, p5, p25, p50, p75, p95, p99, p99_9, p99_99, max

``p99_9`` is the 99.9th and ``p99_99`` the 99.99th percentile. With no values,
count is 0 and every other key is None.
"""

from typing import Any, Final

import numpy as np
import pandas as pd

from ground.contract import SECOND_MS

PERCENTILES: dict[str, float] = {
    "p1": 1.0,
    "p5": 5.0,
    "p25": 25.0,
    "p50": 50.0,
    "p75": 75.0,
    "p95": 95.0,
    "p99": 99.0,
    "p99_9": 99.9,
    "p99_99": 99.99,
}
METHOD: Final = "linear"
STAT_KEYS = ("count", "mean", "min", *PERCENTILES, "max")


def describe(values: np.ndarray) -> dict[str, float | int | None]:
    """count, mean, min, the percentile ladder and max of ``values`` (ms)."""
    values = np.asarray(values)
    if values.size == 0:
        return {k: (0 if k == "count" else None) for k in STAT_KEYS}
    qs = np.percentile(values, list(PERCENTILES.values()), method=METHOD)
    result: dict[str, float | int | None] = {
        "count": int(values.size),
        "mean": float(values.mean(dtype=np.float64)),
        "min": float(values.min()),
    }
    result.update({k: float(q) for k, q in zip(PERCENTILES, qs, strict=True)})
    result["max"] = float(values.max())
    return result


def grouped_percentiles(
    keys: np.ndarray, values: np.ndarray, qs: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key: the key, the count and the ``qs`` percentiles (0–100) of its
    values, exactly as numpy's linear method; one sort, no per-group Python loop.

    Integer keys and values are packed into one int64 and sorted in place, which
    keeps the memory for 10 M values at about two copies of one column.
    """
    keys, values = np.asarray(keys, np.int64), np.asarray(values)
    if keys.size == 0:
        return keys, np.zeros(0, np.int64), np.zeros((len(qs), 0))
    vmin = int(values.min())
    span = int(values.max()) - vmin + 1
    kmin = int(keys.min())
    packable = values.dtype.kind in "iu" and (int(keys.max()) - kmin + 1) * span < 2**62
    if packable:
        packed = (keys - kmin) * span
        packed += values - vmin
        packed.sort()
        k = packed // span

        def value_at(idx: np.ndarray) -> Any:
            return (packed[idx] - k[idx] * span + vmin).astype(np.float64)
    else:
        order = np.lexsort((values, keys))
        k, v = keys[order] - kmin, values[order].astype(np.float64)

        def value_at(idx: np.ndarray) -> Any:
            return v[idx]

    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    counts = np.diff(np.r_[starts, k.size])
    result = np.empty((len(qs), starts.size))
    for i, q in enumerate(qs):
        pos = (counts - 1) * (q / 100)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, counts - 1)
        a, b = value_at(starts + lo), value_at(starts + hi)
        result[i] = a + (b - a) * (pos - lo)
    return k[starts] + kmin, counts, result


def timeseries(
    output_ts: np.ndarray,
    latency: np.ndarray,
    input_ts: np.ndarray,
) -> pd.DataFrame:
    """Per broker second: outputs and inputs appended, p50 and p99 latency of the
    outputs appended in that second.

    Columns: second (epoch s), input_count, output_count, latency_p50_ms,
    latency_p99_ms. Seconds without outputs have NaN latency.
    """
    columns = ["second", "input_count", "output_count", "latency_p50_ms", "latency_p99_ms"]
    seconds, counts, qs = grouped_percentiles(
        np.asarray(output_ts, np.int64) // SECOND_MS, np.asarray(latency), (50.0, 99.0)
    )
    in_seconds, in_counts = np.unique(
        np.asarray(input_ts, np.int64) // SECOND_MS, return_counts=True
    )
    if seconds.size == 0 and in_seconds.size == 0:
        return pd.DataFrame(columns=columns)
    first = min(
        seconds.min(initial=np.iinfo(np.int64).max), in_seconds.min(initial=np.iinfo(np.int64).max)
    )
    last = max(
        seconds.max(initial=np.iinfo(np.int64).min), in_seconds.max(initial=np.iinfo(np.int64).min)
    )
    full = np.arange(first, last + 1)
    frame = pd.DataFrame({"second": full, "input_count": 0, "output_count": 0})
    frame["latency_p50_ms"] = np.nan
    frame["latency_p99_ms"] = np.nan
    frame.loc[in_seconds - first, "input_count"] = in_counts
    frame.loc[seconds - first, "output_count"] = counts
    frame.loc[seconds - first, "latency_p50_ms"] = qs[0]
    frame.loc[seconds - first, "latency_p99_ms"] = qs[1]
    return frame[columns]
