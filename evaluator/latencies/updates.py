"""A stage written in update mode: each window's updates, its first and its complete one.

Spark's update mode writes a window again each time an input changes it, and each
update carries the window's inputs so far: their count and their broker times. Two
latencies follow (docs/method.md#updates):

- the **first update**: its broker time − the latest input it carries, i.e. how
  soon a window shows anything;
- the **complete window**: the first update that carries every input the window
  has (its input count is the one the inputs imply), measured like any other
  stage's output: its broker time − the latest of the window's inputs. This is the
  stage's latency, comparable with a window written once when it closes.

Partial updates are neither duplicates nor wrong outputs: they are set aside
before the completeness and value checks, which see each window's complete update,
and before the throughput and the per-second series, which count complete windows.
A window that never became complete is missing. An update after the complete one
stays, and is counted as a duplicate: a complete window must not change.

Pure functions on the read topics, unit-tested without Kafka.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluator.outputs import checks
from evaluator.statistics import stats
from evaluator.topics.reader import OFFSET, PARTITION, TIMESTAMP
from ground import contract as s


@dataclass(frozen=True, eq=False)
class Updates:
    """Per window with at least one explained update (one entry each, aligned)."""

    window_latest_ms: np.ndarray
    """The latest broker time of the window's inputs (which period it belongs to)."""
    first_update_ms: np.ndarray
    """The first update's latency: its broker time − the latest input time it carries."""
    first_carried_outside: np.ndarray
    """The first update carries a latest input time outside the span of the window's
    inputs' times (before the earliest or after the latest)."""
    updates: np.ndarray
    """Updates up to and including the complete one (all of them when never complete)."""
    complete: np.ndarray
    """Whether an update carried every input of the window."""

    def section(self, measured: np.ndarray) -> dict[str, Any]:
        """summary.json's ``updates`` for the windows where ``measured``."""
        counts = self.updates[measured]
        complete = self.complete[measured]
        done = counts[complete]
        return {
            "windows": int(measured.sum()),
            "complete": int(complete.sum()),
            "never_complete": int((~complete).sum()),
            "partial_updates": int(counts.sum() - complete.sum()),
            "per_window": {
                "mean": float(done.mean()) if done.size else None,
                "p50": float(np.median(done)) if done.size else None,
                "max": int(done.max()) if done.size else None,
            },
            "first_update_ms": stats.describe(self.first_update_ms[measured]),
            "first_carried_outside": int(self.first_carried_outside[measured].sum()),
        }


def split_updates(
    outputs: pd.DataFrame, expected: pd.DataFrame, identity: tuple[str, ...]
) -> tuple[pd.DataFrame, Updates]:
    """Each window's complete update (and any update after it), with what its
    updates say.

    ``outputs``: the valid outputs with their broker times (:data:`TIMESTAMP`) and
    Kafka positions; ``expected``: one row per window
    (:func:`evaluator.outputs.expected.expected_outputs`). Outputs no input explains stay
    (they are counted as unexpected); the partial updates of explained windows,
    and every update of a window never complete, leave.
    """
    rows = checks.lookup(outputs, expected, identity)
    explained = rows >= 0
    order_keys = [outputs[c].to_numpy() for c in (OFFSET, PARTITION, TIMESTAMP) if c in outputs]
    # by window, then in the order the broker appended them
    order = np.lexsort((*order_keys, rows))
    order = order[explained[order]]
    window = rows[order]
    first = np.r_[True, window[1:] != window[:-1]] if window.size else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    position = np.arange(window.size) - starts[group]

    want = expected[s.INPUT_COUNT].to_numpy(np.int64)[window]
    carried = outputs[s.INPUT_COUNT].to_numpy(float, na_value=np.nan)[order]
    # fewer inputs than the window has: a partial update; as many, or (a defect the
    # checks report) more, or none stated: the update that stands for the window
    full = ~(carried < want)
    sentinel = np.iinfo(np.int64).max
    first_full = np.full(starts.size, sentinel, np.int64)
    np.minimum.at(first_full, group[full], position[full])
    complete = first_full < sentinel
    sizes = np.diff(np.r_[starts, window.size])
    keep = np.ones(len(outputs), bool)
    keep[order] = position >= first_full[group]

    head = order[starts]
    out_ts = outputs[TIMESTAMP].to_numpy(np.int64)[head]
    carried_ts = outputs[s.INPUT_TS_LATEST].to_numpy(np.int64)[head]
    windows = window[starts]
    latest = expected[s.INPUT_TS_LATEST].to_numpy(np.int64)[windows]
    earliest = expected[s.INPUT_TS_EARLIEST].to_numpy(np.int64)[windows]
    updates = Updates(
        window_latest_ms=latest,
        first_update_ms=out_ts - carried_ts,
        first_carried_outside=(carried_ts < earliest) | (carried_ts > latest),
        updates=np.where(complete, first_full + 1, sizes),
        complete=complete,
    )
    kept = outputs if keep.all() else outputs.loc[keep].reset_index(drop=True)
    return kept, updates
