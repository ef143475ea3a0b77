"""Custom tumbling and sliding windows with ``transformWithStateInPandas`` (docs/method.md#stages).

The built-in windows emit only when the watermark passes a window's end. These
processors keep per-location state in the RocksDB state store and emit as soon as
an output can no longer change: a location-second once all its lanes (``num_lanes``)
are in, a sliding window once its last second is in and each earlier one is in or can
no longer come. An event-time timer at the end of each second is the fallback for a
lane that never comes: the second is then emitted when the watermark passes, exactly
when the built-in window would emit it, and the sliding windows that contain it wait
for it. On complete input the tumbling results equal :mod:`engines.spark.transforms`'s; the
sliding results equal them whatever order the seconds arrive in.
"""

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

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
    StructField,
    StructType,
)

from engines.spark.schema import struct
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

_WINDOW = (LOCATION_ID, WINDOW_START, WINDOW_END, FLOW_SUM, SPEED_AVG)
_CHANGES = (FLOW_CHANGE_SHORT, FLOW_CHANGE_LONG, SPEED_CHANGE_SHORT, SPEED_CHANGE_LONG)
_TIMES = (INPUT_TS_LATEST, INPUT_TS_EARLIEST, INPUT_COUNT)
TUMBLING_SCHEMA = struct((*_WINDOW, LANES_SEEN, NUM_LANES, *_TIMES))
SLIDING_SCHEMA = struct((*_WINDOW, *_CHANGES, *_TIMES))
"""The custom windows' output rows: the columns of the built-in windows, in their order."""

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
        StructField("waiting", IntegerType()),
        StructField("timer", IntegerType()),
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


def _change(now: float, then: tuple[float, ...] | None, field: int) -> float | None:
    """(now − then) / then of one field; None when the earlier second is missing or zero."""
    if then is None or then[field] == 0:
        return None
    return (now - then[field]) / then[field]


_WAITING, _TIMER = 5, 6
"""Indexes in a kept second's tuple (:data:`_SECOND`): the window it ends is still to be
emitted; a timer at its start was registered for that window."""
FORGET_EVERY_MS = 10_000
"""A location's cleanup timer, which forgets its seconds once it has gone quiet, sits on
a multiple of this, so a location that keeps sending moves it once per interval and
never lets it fire: a firing timer reads the location's state, a state-server round
trip as costly as handling the location's rows."""


def forget_at(second: int, length_ms: int) -> int:
    """The cleanup timer of a location whose newest second is ``second``: the first
    multiple of :data:`FORGET_EVERY_MS` a window length or more after it."""
    return -(-(second + length_ms) // FORGET_EVERY_MS) * FORGET_EVERY_MS


class Settled(NamedTuple):
    """What :func:`settle` decides for one location."""

    ready: list[int]
    """Last seconds of the windows to emit now, in order."""
    held: list[int]
    """Last seconds of the windows that must wait for an earlier second."""
    forget: list[int]
    """Seconds that no window still to be emitted needs."""


def settle(seconds: Mapping[int, tuple], watermark: int, length_ms: int) -> Settled:
    """Which windows ending in ``seconds`` can be emitted at ``watermark``, and what to keep.

    ``seconds`` maps a second's start to its tumbling result (:data:`_SECOND`). The
    tumbling stage emits a complete second at once but a partial one only when the
    watermark passes its end, so a second absent from a window can still arrive until
    then. A window is emitted once each of its earlier seconds is present or can no
    longer arrive: it then equals the built-in window, which waits for its end. A held
    window is ready at the latest when the watermark reaches its last second's start.
    A second is forgotten once the watermark is a window length past it: every window
    containing it has then been emitted or can no longer be. The newest second stays
    until its :func:`forget_at`: it names the location's cleanup timer.
    """
    ready, held = [], []
    for last, value in sorted(seconds.items()):
        if not value[_WAITING]:
            continue
        earlier = range(last + SECOND_MS - length_ms, last, SECOND_MS)
        if any(s not in seconds and s + SECOND_MS > watermark for s in earlier):
            held.append(last)
        else:
            ready.append(last)
    newest = max(seconds, default=None)
    forget = [
        s
        for s in seconds
        if s + length_ms <= watermark and (s != newest or forget_at(s, length_ms) <= watermark)
    ]
    return Settled(ready, held, forget)


def sliding_row(
    location: str, last: int, seconds: Mapping[int, tuple], length_ms: int, lookbacks: tuple
) -> dict[str, Any]:
    """The window ending with second ``last``, from the seconds present in it (as the built-in).

    ``lookbacks``: the short and the long lookback (ms) of the relative changes.
    """
    end = last + SECOND_MS
    now = seconds[last]
    present = [v for s, v in seconds.items() if end - length_ms <= s < end]
    short, long = (seconds.get(last - back) for back in lookbacks)
    return {
        LOCATION_ID: location,
        WINDOW_START: end - length_ms,
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


class SlidingProcessor(StatefulProcessor):
    """Per location: the recent seconds' results; emit a window once none of its seconds
    can still change it (:func:`settle`), re-checked on each arrival and at event-time timers."""

    def __init__(self, length_ms: int, slide_ms: int, short_ms: int, long_ms: int) -> None:
        self.length_ms, self.slide_ms = length_ms, slide_ms
        self.lookbacks = (short_ms, long_ms)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.seconds = handle.getMapState("seconds", _SECOND_KEY, _SECOND)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        stored = {k[0]: v for k, v in self.seconds.iterator()}
        arrived = {}
        for pdf in rows:
            for r in pdf.itertuples(index=False):
                d = r._asdict()
                second = int(d[WINDOW_START])
                arrived[second] = (
                    float(d[FLOW_SUM]),
                    float(d[SPEED_AVG]),
                    int(d[INPUT_TS_LATEST]),
                    int(d[INPUT_TS_EARLIEST]),
                    int(d[INPUT_COUNT]),
                    int((second + SECOND_MS) % self.slide_ms == 0),
                    0,
                )
        yield from self._settle(key[0], stored, arrived, timerValues.getCurrentWatermarkInMs())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        stored = {k[0]: v for k, v in self.seconds.iterator()}
        yield from self._settle(key[0], stored, {}, timerValues.getCurrentWatermarkInMs())

    def _settle(
        self, location: str, stored: dict[int, tuple], arrived: dict[int, tuple], watermark: int
    ) -> Iterator[pd.DataFrame]:
        """Emit the windows :func:`settle` finds ready; write back what changed; set timers.

        Timers: the cleanup timer at :func:`forget_at` of the newest second, which
        forgets the seconds of a location gone quiet, and one at the start of each held
        window's last second, when the window is ready at the latest (an arrival for
        the location re-checks it sooner), flagged on that second. The stored seconds
        thus say which timers exist: none is registered twice (Spark warns), and the
        cleanup timer is moved, not added to.
        """
        kept = {**stored, **arrived}
        settled = settle(kept, watermark, self.length_ms)
        out = [
            sliding_row(location, last, kept, self.length_ms, self.lookbacks)
            for last in settled.ready
        ]
        changed = dict(arrived)
        for last in settled.ready:
            changed[last] = (*kept[last][:_WAITING], 0, kept[last][_TIMER])
        left = set(kept) - set(settled.forget)
        cleanup = forget_at(max(stored), self.length_ms) if stored else None
        moved = forget_at(max(left), self.length_ms) if left else None
        held = {s for s, v in kept.items() if v[_TIMER]} | set(settled.held)
        for last in settled.held:
            if not kept[last][_TIMER]:
                changed[last] = (*kept[last][:_TIMER], 1)
                if last != cleanup:
                    self.handle.registerTimer(last)
        if moved != cleanup:
            if moved is not None:
                self.handle.registerTimer(moved)
            if cleanup is not None and cleanup > watermark and cleanup not in held:
                self.handle.deleteTimer(cleanup)
        for second in settled.forget:
            changed.pop(second, None)
            if second in stored:
                self.seconds.removeKey((second,))
        for second, value in changed.items():
            if value != stored.get(second):
                self.seconds.updateValue((second,), value)
        yield from _frame(out, SLIDING_SCHEMA)

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
    """Custom sliding window over the custom tumbling output (same columns as the built-in).

    Event-time mode for its timers: a transformWithState passes its input watermark on,
    so this operator sees the tumbling operator's watermark, batch by batch.
    """
    return tumbled.groupBy(LOCATION_ID).transformWithStateInPandas(
        statefulProcessor=SlidingProcessor(length_ms, slide_ms, short_ms, long_ms),
        outputStructType=SLIDING_SCHEMA,
        outputMode="Append",
        timeMode="EventTime",
    )
