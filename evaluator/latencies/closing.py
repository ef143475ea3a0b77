"""A window's latency split at the input that let it close: the wait for the watermark,
then the engine's own delay (docs/method.md#window-closing).

A built-in window is emitted once, when the engine's event-time clock passes its end
plus the watermark delay. Its latency, from its latest input to its output, splits at
the **closing input**: the first input, in broker time, after which that clock had
passed the end. Before it no engine could have emitted the window (**wait**: closing
input − latest input, set by the input rate, the event times and the delay); after it
the engine had all it needed (**engine**: output − closing input: the clock's
propagation, a micro-batch, the write).

Which input closes a window depends on how the engine's clock combines the input
topics, as the run says (``event_clock``): a watermark is the *least* of the topics'
(Spark, Flink: both topics must have passed the end), Kafka Streams' stream time the
*greatest* (either topic). Each topic's clock is the newest event time it has brought,
over all its partitions: exact with one partition a topic, the runs' default; with more,
a watermark that waits for each partition closes later than this says (the engine part
then holds the rest of the wait).
"""

from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from evaluator.latencies.latency import LATENCY
from evaluator.outputs.expected import valid_mask
from evaluator.statistics.stats import describe
from evaluator.topics.reader import TIMESTAMP, TOPIC
from ground import contract as s

EventClock = Literal["least", "greatest"]
CLOCKS: Final[tuple[EventClock, ...]] = ("least", "greatest")


def closing_times(
    inputs: pd.DataFrame, ends_ms: np.ndarray, delay_ms: int, clock: EventClock
) -> np.ndarray:
    """For each window end, the broker time (ms) of the input that let it close; NaN when
    the inputs never passed it."""
    ends = np.asarray(ends_ms, np.int64) + delay_ms
    valid = inputs[valid_mask(inputs)]
    per_topic = []
    for _, rows in valid.groupby(TOPIC, observed=True, sort=True):
        order = np.argsort(rows[TIMESTAMP].to_numpy(np.int64), kind="stable")
        broker = rows[TIMESTAMP].to_numpy(np.int64)[order]
        newest = np.maximum.accumulate(rows[s.OBSERVATION_TS].to_numpy(np.int64)[order])
        at = np.searchsorted(newest, ends, side="left")
        found = at < len(broker)
        times = np.full(len(ends), np.nan)
        times[found] = broker[at[found]]
        per_topic.append(times)
    if not per_topic:
        return np.full(len(ends), np.nan)
    stacked = np.vstack(per_topic)
    # least: every topic must have passed it (NaN: one never did); greatest: either
    closed: np.ndarray = stacked.max(axis=0) if clock == "least" else np.fmin.reduce(stacked)
    return closed


def split(
    outputs: pd.DataFrame,
    inputs: pd.DataFrame,
    window_ms: int,
    delay_ms: int,
    clock: EventClock,
) -> dict[str, Any]:
    """summary.json's ``window_closing``: of the measured ``outputs`` (a window stage's,
    with their broker times, window starts and latencies), the wait and engine parts of
    each one's latency (see the module), for windows ``window_ms`` long."""
    ends = outputs[s.WINDOW_START].to_numpy(np.int64) + window_ms
    closing = closing_times(inputs, ends, delay_ms, clock)
    known = ~np.isnan(closing)
    emitted = outputs[TIMESTAMP].to_numpy(np.int64)[known]
    latest = emitted - outputs[LATENCY].to_numpy(np.int64)[known]
    return {
        "event_clock": clock,
        "watermark_delay_ms": delay_ms,
        "windows": int(known.sum()),
        "never_closed": int((~known).sum()),
        "wait_ms": describe(closing[known] - latest),
        "engine_ms": describe(emitted - closing[known]),
    }
