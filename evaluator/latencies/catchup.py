"""Catching up with a backlog: when a job started behind its input reaches the live edge.

In the single burst the job starts after a backlog was published, reads it from
the earliest offset, and meanwhile new input keeps arriving at the base rate. Its
outputs first carry old inputs (latency of the backlog's age), then, once the
backlog is processed, fresh ones. The job has **caught up** when its outputs are
as fresh as they will be: the per-second p50 is within ``threshold`` (20 %) of the
**live p50**, the median per-second p50 of the run's last ``live_s`` seconds with
outputs, for :data:`HOLD_S` seconds with outputs in a row; the catch-up time is
from the job's start (a broker-clock mark) to the first of them.

A run whose last outputs still carry inputs older than the job's start has not
caught up: its last seconds are the backlog's tail, not the live latency, so no
catch-up is claimed.
"""

from typing import Any

import numpy as np
import pandas as pd

from evaluator.statistics.steady import MIN_POINTS
from ground.contract import SECOND_MS

HOLD_S = 3
"""Seconds with outputs in a row within the bound that make the catch-up."""
LIVE_S = 20
THRESHOLD = 0.2


def catch_up(
    series: pd.DataFrame,
    job_started_ms: int,
    live_s: int = LIVE_S,
    threshold: float = THRESHOLD,
) -> dict[str, Any]:
    """``{live_p50_ms, caught_up_s, caught_up}`` from a per-second series
    (:func:`evaluator.statistics.stats.timeseries`: ``second``, ``output_count``,
    ``latency_p50_ms``).

    ``caught_up`` is False (and ``caught_up_s`` None) when the last ``live_s``
    seconds still carry backlog (a second's p50 input was appended before the job
    started: second − p50 < start) or nothing came within the bound; None when the
    series is too short to tell (fewer than :data:`MIN_POINTS` live seconds).
    """
    seconds = series["second"].to_numpy(np.int64)
    p50 = series["latency_p50_ms"].to_numpy(np.float64)
    with_output = (series["output_count"].to_numpy() > 0) & ~np.isnan(p50)
    after = seconds * SECOND_MS >= job_started_ms - SECOND_MS  # the second holding the start
    idx = np.flatnonzero(with_output & after)
    live = idx[-live_s:]
    if live.size < MIN_POINTS:
        return {"live_p50_ms": None, "caught_up_s": None, "caught_up": None}
    live_p50 = float(np.median(p50[live]))
    found = None
    if np.all(seconds[live] * SECOND_MS - p50[live] >= job_started_ms):
        bound = live_p50 * (1 + threshold)
        streak = 0
        for i in idx:
            streak = streak + 1 if p50[i] <= bound else 0
            if streak == HOLD_S:
                found = idx[np.searchsorted(idx, i) - HOLD_S + 1]
                break
    caught_up_s = None
    if found is not None:
        caught_up_s = max(0, int(seconds[found]) * SECOND_MS - job_started_ms) / SECOND_MS
    return {"live_p50_ms": live_p50, "caught_up_s": caught_up_s, "caught_up": found is not None}
