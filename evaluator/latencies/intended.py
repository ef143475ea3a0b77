"""Latency from the intended send time: what a publisher that fell behind would hide.

Every input carries ``scheduled_ts``, when the publisher's schedule said to send it.
An input's send delay is its broker append − that time: the publisher's own lag plus
the produce path. The broker-clock latency starts at the append, so a saturated
publisher lowers the offered load and hides its wait; the latency from the intended
send time (an output − the scheduled time of its latest input, as OpenMessaging
Benchmark corrects its producers' latency) does not (docs/method.md#intended-send-time).

Each output's latest input is known by its broker time only; where several inputs were
appended in that millisecond, the largest send delay among them is taken. The schedule
is read on the publisher's clock and the append on the broker's: one clock when the
broker runs on the same host (embedded or a local container), an approximation
otherwise.
"""

from typing import Any

import numpy as np
import pandas as pd

from evaluator.latencies.latency import LATENCY, Period
from evaluator.statistics import stats
from evaluator.topics.reader import TIMESTAMP
from ground import contract as s

SAME_HOST = ("embedded", "container")
"""Broker kinds (the run's ``machine.broker.kind``) on the publisher's host."""


def input_delays(inputs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The broker time and the send delay (ms) of every input that carries a schedule."""
    if s.SCHEDULED_TS not in inputs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    scheduled = pd.to_numeric(inputs[s.SCHEDULED_TS], errors="coerce").to_numpy(float)
    known = ~np.isnan(scheduled)
    ts = inputs[TIMESTAMP].to_numpy(np.int64)[known]
    return ts, ts - scheduled[known].astype(np.int64)


def send_delays(ts: np.ndarray, delay: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per broker millisecond of ``ts``: the millisecond (sorted) and the largest send
    delay of its inputs."""
    if not len(ts):
        return ts, delay
    order = np.argsort(ts, kind="stable")
    ts, delay = ts[order], delay[order]
    starts = np.flatnonzero(np.diff(ts, prepend=ts[0] - 1))
    return ts[starts], np.maximum.reduceat(delay, starts)


def intended_latencies(measured: pd.DataFrame, delays: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Each measured output's latency from its latest input's intended send time: its
    broker-clock latency plus that input's send delay (NaN where no input of that
    millisecond carried a schedule)."""
    ms, delay = delays
    latency = measured[LATENCY].to_numpy(float)
    latest = measured[TIMESTAMP].to_numpy(np.int64) - measured[LATENCY].to_numpy(np.int64)
    if not len(ms):
        return np.full(len(latency), np.nan)
    at = np.minimum(np.searchsorted(ms, latest), len(ms) - 1)
    return np.where(ms[at] == latest, latency + delay[at], np.nan)


def section(
    measured: pd.DataFrame, inputs: pd.DataFrame | None, period: Period, broker_kind: str | None
) -> dict[str, Any] | None:
    """``latency_ms`` (from the intended send time), ``send_delay_ms`` (of the measured
    period's inputs) and ``same_clock`` (true: the broker on the publisher's host; false:
    elsewhere, the figures approximate; null: not recorded); None when no input carried
    a schedule."""
    if inputs is None:
        return None
    ts, delay = input_delays(inputs)
    if not len(ts):
        return None
    intended = intended_latencies(measured, send_delays(ts, delay))
    return {
        "latency_ms": stats.describe(intended[~np.isnan(intended)]),
        "send_delay_ms": stats.describe(delay[period.contains(ts)]),
        "same_clock": None if broker_kind is None else broker_kind in SAME_HOST,
    }
