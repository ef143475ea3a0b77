"""Per-output latency from one broker clock, and the measured period.

latency = LogAppendTime(output) − LogAppendTime of its latest input (primary;
also of its earliest input), in ms. The input timestamps are the ones the
evaluator derives from the input topics (:mod:`evaluator.outputs.checks`), never the
ones the pipeline carried. Negative values are impossible on one clock; they
are kept as they are (never clamped) and counted as a measurement error.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.topics.reader import TIMESTAMP
from ground import contract as s

LATENCY = "latency_ms"
LATENCY_EARLIEST = "latency_earliest_ms"
IN_RANGE = "in_range"
EXPLAINED = "explained"
"""Whether an input explains the output (its identity is expected): only those have a latency."""


@dataclass(frozen=True)
class Period:
    """The measured period, epoch ms: an output (or expected output) counts when
    its ``input_ts_latest`` lies in [lo, hi]."""

    start: int
    end: int
    lo: int
    hi: int

    @property
    def seconds(self) -> float:
        return max(self.hi - self.lo, 0) / 1000

    def contains(self, ts: np.ndarray) -> np.ndarray:
        ts = np.asarray(ts)
        return (ts >= self.lo) & (ts <= self.hi)


def measured_period(
    start: int,
    end: int,
    config: EvaluatorConfig,
    run_start: int | None = None,
    run_end: int | None = None,
) -> Period:
    """[start + warm-up, end − end cut]; the run's own period wins when given."""
    start = run_start if run_start is not None else start
    end = run_end if run_end is not None else end
    lo = start + config.warmup_ms(max(end - start, 0))
    hi = end - round(config.end_cut_s * 1000)
    return Period(start=int(start), end=int(end), lo=int(lo), hi=int(hi))


def with_latencies(
    outputs: pd.DataFrame,
    period: Period,
    latest: np.ndarray | None = None,
    earliest: np.ndarray | None = None,
) -> pd.DataFrame:
    """``outputs`` plus latency columns and the in-range flag (a shallow copy:
    the caller's frame is not changed and its columns are not copied).

    ``latest``/``earliest``: each output's input timestamps derived from the input
    topics (default: the carried ``input_ts_latest``/``input_ts_earliest``, when no
    input was read).
    """
    ts = outputs[TIMESTAMP].to_numpy(np.int64)
    if latest is None:
        latest = outputs[s.INPUT_TS_LATEST].to_numpy()
    if earliest is None:
        earliest = outputs[s.INPUT_TS_EARLIEST].to_numpy()
    frame = outputs.copy(deep=False)
    frame[LATENCY] = ts - latest
    frame[LATENCY_EARLIEST] = ts - earliest
    frame[IN_RANGE] = period.contains(latest)
    return frame
