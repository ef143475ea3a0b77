"""How late the inputs reach the broker in event time: the evidence a watermark delay
is chosen by (docs/method.md#watermark).

A join or window keeps its state until the watermark, the newest event time it has seen
less the delay, passes; Spark drops an input whose event time lies at or before the
watermark (``numRowsDroppedByWatermark`` in its progress reports). How much delay a run
needs is therefore how far each input's observation time lies behind the newest
observation time of the inputs the broker appended before it: its *lateness*. Spark
moves its watermark only between micro-batches, so an input as late as the delay is
dropped only when that newer input fell in an earlier batch: the count at or past the
delay bounds the drops from above, the engine's own count is the drops.

A join holds each side to its own watermark and the query to the older of the two
(Spark's default ``min`` policy), so what drops a join's input is its lateness behind
the newer inputs of its own topic (``within_topic``); a window over the union of
both topics (tumbling-union) has one watermark, and the lateness behind either
topic's inputs counts.

Inputs appended in the same broker millisecond are not before one another (one clock
cannot order them), and an input with no valid observation time (malformed) has none.
"""

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from evaluator.outputs.expected import valid_mask
from evaluator.topics.reader import TIMESTAMP, TOPIC
from ground import contract as s

QUANTILES = {"p50_ms": 50.0, "p99_ms": 99.0, "p99_9_ms": 99.9}


def behind_ms(broker_ms: np.ndarray, event_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each input: the newest event time among the inputs appended in an earlier
    broker millisecond less its own (negative: it is the newest), and whether any input
    came before it at all (not for those of the first millisecond)."""
    if len(broker_ms) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    order = np.argsort(broker_ms, kind="stable")
    ts, events = broker_ms[order], event_ms[order].astype(np.int64)
    millis, first = np.unique(ts, return_index=True)
    newest_through = np.maximum.accumulate(np.maximum.reduceat(events, first))
    group = np.searchsorted(millis, ts)
    behind, before = np.zeros(len(ts), dtype=np.int64), np.zeros(len(ts), dtype=bool)
    behind[order] = np.where(group > 0, newest_through[np.maximum(group - 1, 0)] - events, 0)
    before[order] = group > 0
    return behind, before


def lateness_ms(broker_ms: np.ndarray, event_ms: np.ndarray) -> np.ndarray:
    """Each input's lateness: :func:`behind_ms`, 0 where the input is the newest yet."""
    late: np.ndarray = np.maximum(behind_ms(broker_ms, event_ms)[0], 0)
    return late


def input_lateness(inputs: pd.DataFrame, delay_ms: int | None) -> dict[str, Any] | None:
    """The ``input_lateness`` section of a run whose inputs carry an event time: how many
    valid inputs were read, how many were late, the lateness's percentiles and maximum
    (event-time ms) and, against the run's watermark ``delay_ms``, how many were at or
    past it. None without a valid input."""
    valid = inputs[valid_mask(inputs)]
    if valid.empty:
        return None
    behind, before = behind_ms(
        valid[TIMESTAMP].to_numpy(np.int64), valid[s.OBSERVATION_TS].to_numpy(np.int64)
    )
    return {
        **_section(behind, before, delay_ms),
        "watermark_delay_ms": delay_ms,
        "within_topic": {
            str(topic): _section(
                *behind_ms(
                    group[TIMESTAMP].to_numpy(np.int64),
                    group[s.OBSERVATION_TS].to_numpy(np.int64),
                ),
                delay_ms,
            )
            for topic, group in (
                valid.groupby(TOPIC, observed=True) if TOPIC in valid.columns else ()
            )
        },
    }


def _section(behind: np.ndarray, before: np.ndarray, delay_ms: int | None) -> dict[str, Any]:
    late = np.maximum(behind, 0)
    # a watermark of delay d drops an input d or more behind one appended before it
    past = None if delay_ms is None else int((before & (behind >= delay_ms)).sum())
    return {
        "inputs": len(late),
        "late": int((late > 0).sum()),
        **{key: float(np.percentile(late, q)) for key, q in QUANTILES.items()},
        "max_ms": int(late.max()),
        "at_or_past_delay": past,
    }


def dropped_by_watermark(events: Iterable[dict[str, Any]]) -> dict[str, int] | None:
    """Rows Spark's stateful operators dropped as later than the watermark, summed over a
    run's progress events (``engine_progress.jsonl``), per operator; None when no event
    reports a stateful operator (a stateless stage, the floor)."""
    dropped: dict[str, int] = {}
    for event in events:
        if event.get("event") != "progress":
            continue
        for operator in event.get("stateOperators") or ():
            name = str(operator.get("operatorName", "unknown"))
            dropped[name] = dropped.get(name, 0) + int(operator.get("numRowsDroppedByWatermark", 0))
    return dropped or None
