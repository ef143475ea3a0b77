"""Custom tumbling and sliding windows with ``transformWithStateInPandas`` (docs/method.md#stages).

The built-in windows emit only when the watermark passes a window's end. These
processors keep per-location state in the RocksDB state store and emit as soon as
an output is complete: a location-second once all its lanes (``num_lanes``) are in,
a sliding result as soon as its last second arrives. An event-time timer at the end
of each second is the fallback for a lane that never comes: the second is then
emitted when the watermark passes, exactly when the built-in window would emit it.
On complete input both give the same results as :mod:`pipelines.stages`.
"""

from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)
from pyspark.sql.types import (
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ground.contract import (
    FLOW,
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    LANE,
    LANES_SEEN,
    LOCATION_ID,
    NUM_LANES,
    OBSERVATION_TS,
    SECOND_MS,
    SPEED,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    WINDOW_END,
    WINDOW_START,
)

MAX_LANES = 62
"""Lanes seen are a bit mask in a long."""

TUMBLING_SCHEMA = StructType(
    [
        StructField(LOCATION_ID, StringType()),
        StructField(WINDOW_START, LongType()),
        StructField(WINDOW_END, LongType()),
        StructField(FLOW_SUM, DoubleType()),
        StructField(SPEED_AVG, DoubleType()),
        StructField(LANES_SEEN, IntegerType()),
        StructField(NUM_LANES, IntegerType()),
        StructField(INPUT_TS_LATEST, LongType()),
        StructField(INPUT_TS_EARLIEST, LongType()),
        StructField(INPUT_COUNT, LongType()),
    ]
)
SLIDING_SCHEMA = StructType(
    [
        StructField(LOCATION_ID, StringType()),
        StructField(WINDOW_START, LongType()),
        StructField(WINDOW_END, LongType()),
        StructField(FLOW_SUM, DoubleType()),
        StructField(SPEED_AVG, DoubleType()),
        StructField(FLOW_CHANGE_SHORT, DoubleType()),
        StructField(FLOW_CHANGE_LONG, DoubleType()),
        StructField(SPEED_CHANGE_SHORT, DoubleType()),
        StructField(SPEED_CHANGE_LONG, DoubleType()),
        StructField(INPUT_TS_LATEST, LongType()),
        StructField(INPUT_TS_EARLIEST, LongType()),
        StructField(INPUT_COUNT, LongType()),
    ]
)

_SECOND_KEY = StructType([StructField("second", LongType())])
_PARTIAL = StructType(
    [
        StructField("flow_sum", DoubleType()),
        StructField("speed_sum", DoubleType()),
        StructField("rows", LongType()),
        StructField("lanes", LongType()),
        StructField("num_lanes", IntegerType()),
        StructField("latest", LongType()),
        StructField("earliest", LongType()),
        StructField("count", LongType()),
        StructField("emitted", IntegerType()),
    ]
)
_SECOND = StructType(
    [
        StructField("flow_sum", DoubleType()),
        StructField("speed_avg", DoubleType()),
        StructField("latest", LongType()),
        StructField("earliest", LongType()),
        StructField("count", LongType()),
    ]
)


def _tumbling_row(location: str, second: int, p: tuple) -> dict[str, Any]:
    flow_sum, speed_sum, rows, lanes, num_lanes, latest, earliest, count, _ = p
    return {
        LOCATION_ID: location,
        WINDOW_START: second,
        WINDOW_END: second + SECOND_MS,
        FLOW_SUM: flow_sum,
        SPEED_AVG: speed_sum / rows,
        LANES_SEEN: lanes.bit_count(),
        NUM_LANES: num_lanes,
        INPUT_TS_LATEST: latest,
        INPUT_TS_EARLIEST: earliest,
        INPUT_COUNT: count,
    }


def _frame(rows: list[dict[str, Any]], schema: StructType) -> Iterator[pd.DataFrame]:
    if rows:
        yield pd.DataFrame(rows, columns=schema.fieldNames())


class TumblingProcessor(StatefulProcessor):
    """Per location: partial sums per second; emit a second once all its lanes are in."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.partials = handle.getMapState("partials", _SECOND_KEY, _PARTIAL)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        location = key[0]
        watermark = timerValues.getCurrentWatermarkInMs()
        # one state round trip for all open seconds (a missing-key lookup logs a warning)
        stored = {k[0]: v for k, v in self.partials.iterator()}
        touched: dict[int, list] = {}
        for pdf in rows:
            for row in pdf.itertuples(index=False):
                r = row._asdict()
                second = int(r[OBSERVATION_TS]) // SECOND_MS * SECOND_MS
                if second + SECOND_MS <= watermark:
                    continue  # late: its window is closed, as for the built-in window
                p = touched.get(second)
                if p is None:
                    if second in stored:
                        p = list(stored[second])
                    else:
                        p = [0.0, 0.0, 0, 0, int(r[NUM_LANES]), None, None, 0, 0]
                        self.handle.registerTimer(second + SECOND_MS)
                    touched[second] = p
                if p[8]:
                    continue  # already emitted complete; a repeated lane changes nothing
                lane, ts_latest, ts_earliest = (
                    int(r[LANE]),
                    r[INPUT_TS_LATEST],
                    r[INPUT_TS_EARLIEST],
                )
                p[0] += float(r[FLOW])
                p[1] += float(r[SPEED])
                p[2] += 1
                p[3] |= 1 << min(lane, MAX_LANES)
                p[4] = max(p[4], int(r[NUM_LANES]))
                p[5] = int(ts_latest) if p[5] is None else max(p[5], int(ts_latest))
                p[6] = int(ts_earliest) if p[6] is None else min(p[6], int(ts_earliest))
                p[7] += int(r[INPUT_COUNT])
        out = []
        for second, p in sorted(touched.items()):
            if not p[8] and p[3].bit_count() >= p[4]:
                out.append(_tumbling_row(location, second, tuple(p)))
                p[8] = 1
            self.partials.updateValue((second,), tuple(p))
        yield from _frame(out, TUMBLING_SCHEMA)

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        second = expiredTimerInfo.getExpiryTimeInMs() - SECOND_MS
        p = self.partials.getValue((second,))
        self.partials.removeKey((second,))
        if p is not None and not p[8]:
            yield from _frame([_tumbling_row(key[0], second, p)], TUMBLING_SCHEMA)

    def close(self) -> None:
        pass


def _change(now: float, then: tuple | None, field: int) -> float | None:
    """(now − then) / then of one field; None when the earlier second is missing or zero."""
    if then is None or then[field] == 0:
        return None
    return (now - then[field]) / then[field]


class SlidingProcessor(StatefulProcessor):
    """Per location: the last seconds' results; emit when a window's last second arrives."""

    def __init__(self, length_ms: int, slide_ms: int, short_ms: int, long_ms: int) -> None:
        self.length_ms, self.slide_ms = length_ms, slide_ms
        self.short_ms, self.long_ms = short_ms, long_ms

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.seconds = handle.getMapState("seconds", _SECOND_KEY, _SECOND)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        location = key[0]
        kept = {k[0]: v for k, v in self.seconds.iterator()}
        arrived = pd.concat(list(rows)).sort_values(WINDOW_START)
        for r in arrived.itertuples(index=False):
            d = r._asdict()
            second = int(d[WINDOW_START])
            value = (
                float(d[FLOW_SUM]),
                float(d[SPEED_AVG]),
                int(d[INPUT_TS_LATEST]),
                int(d[INPUT_TS_EARLIEST]),
                int(d[INPUT_COUNT]),
            )
            kept[second] = value
            self.seconds.updateValue((second,), value)
        out = []
        for second in arrived[WINDOW_START].drop_duplicates():
            out.extend(self._emit(location, int(second), kept))
        newest = max(kept)
        for second in [s for s in kept if s <= newest - self.length_ms]:
            self.seconds.removeKey((second,))
        yield from _frame(out, SLIDING_SCHEMA)

    def _emit(self, location: str, second: int, kept: dict[int, tuple]) -> list[dict[str, Any]]:
        end = second + SECOND_MS
        if end % self.slide_ms:
            return []
        now = kept[second]
        present = [v for s, v in kept.items() if end - self.length_ms <= s < end]
        short, long = kept.get(second - self.short_ms), kept.get(second - self.long_ms)
        return [
            {
                LOCATION_ID: location,
                WINDOW_START: end - self.length_ms,
                WINDOW_END: end,
                FLOW_SUM: now[0],
                SPEED_AVG: now[1],
                FLOW_CHANGE_SHORT: _change(now[0], short, 0),
                FLOW_CHANGE_LONG: _change(now[0], long, 0),
                SPEED_CHANGE_SHORT: _change(now[1], short, 1),
                SPEED_CHANGE_LONG: _change(now[1], long, 1),
                INPUT_TS_LATEST: max(v[2] for v in present),
                INPUT_TS_EARLIEST: min(v[3] for v in present),
                INPUT_COUNT: sum(v[4] for v in present),
            }
        ]

    def close(self) -> None:
        pass


def tumbling(joined: DataFrame) -> DataFrame:
    """Custom 1 s tumbling window over the join output (same columns as the built-in)."""
    return joined.groupBy(LOCATION_ID).transformWithStateInPandas(
        statefulProcessor=TumblingProcessor(),
        outputStructType=TUMBLING_SCHEMA,
        outputMode="Append",
        timeMode="EventTime",
    )


def sliding(
    tumbled: DataFrame, length_ms: int, slide_ms: int, short_ms: int, long_ms: int
) -> DataFrame:
    """Custom sliding window over a tumbling output; no timers, emits on arrival."""
    return tumbled.groupBy(LOCATION_ID).transformWithStateInPandas(
        statefulProcessor=SlidingProcessor(length_ms, slide_ms, short_ms, long_ms),
        outputStructType=SLIDING_SCHEMA,
        outputMode="Append",
        timeMode="None",
    )
