"""The custom sliding window's processor without Spark: its seconds in every order.

A micro-batch hands the processor each location's new rows with the batch's
watermark, then fires the event-time timers that the watermark passed, in that
order (PySpark's ``TransformWithStateInPandasFuncMode``: data, then timers). The
upstream custom tumbling stage emits a complete second at once and a partial one
in the first batch whose watermark passes its end, so a partial second can reach
the sliding window after later seconds. Every window the processor emits must
equal the built-in window's, once.
"""

import random

import pandas as pd
import pytest
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from engines.spark.custom import SlidingProcessor, forget_at, settle
from ground.contract import (
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    LOCATION_ID,
    SECOND_MS,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    WINDOW_END,
    WINDOW_START,
)
from tests.engines.spark.test_transforms import T0, assert_rows_equal

LENGTH, SLIDE, SHORT, LONG = 3000, 1000, 1000, 2000
START = -T0
"""The watermark of a query's first batch (0, the epoch), in ms after T0 as all watermarks here."""


class _MapState:
    """One location's map state."""

    def __init__(self) -> None:
        self.rows: dict[tuple, tuple] = {}

    def iterator(self):
        return iter(list(self.rows.items()))

    def updateValue(self, key: tuple, value: tuple) -> None:
        self.rows[key] = value

    def removeKey(self, key: tuple) -> None:
        assert key in self.rows, f"removes {key}, which it never stored"
        del self.rows[key]


class _Handle:
    """The processor handle of one location: its map state and its timers."""

    def __init__(self) -> None:
        self.state = _MapState()
        self.timers: set[int] = set()
        self.registered = self.fired = 0

    def getMapState(self, name, key_schema, value_schema) -> _MapState:
        return self.state

    def registerTimer(self, expiry_ms: int) -> None:
        assert expiry_ms not in self.timers, f"timer {expiry_ms} registered twice (Spark warns)"
        self.timers.add(expiry_ms)
        self.registered += 1

    def deleteTimer(self, expiry_ms: int) -> None:
        assert expiry_ms in self.timers, f"deletes timer {expiry_ms}, which does not exist"
        self.timers.discard(expiry_ms)


def tumbled(second: int) -> dict:
    """The tumbling result of second ``second`` (after T0), values distinct per second."""
    start = T0 + second * SECOND_MS
    return {
        LOCATION_ID: "X",
        WINDOW_START: start,
        WINDOW_END: start + SECOND_MS,
        FLOW_SUM: 0.0 if second == 4 else 10.0 + second,
        SPEED_AVG: 80.0 - second,
        INPUT_TS_LATEST: start + 900,
        INPUT_TS_EARLIEST: start + 100 + second % 3,
        INPUT_COUNT: 2 + second % 2,
    }


def run(batches: list[tuple[int, list[int]]]) -> tuple[list[list[dict]], _Handle]:
    """Per batch (watermark in ms after T0, seconds arriving), the windows emitted, in
    Spark's order: the location's rows, then each timer the watermark passed."""
    handle = _Handle()
    processor = SlidingProcessor(LENGTH, SLIDE, SHORT, LONG)
    processor.init(handle)
    emitted = []
    for watermark, arriving in batches:
        times = TimerValues(0, T0 + watermark)
        out = []
        if arriving:
            rows = iter([pd.DataFrame([tumbled(s) for s in arriving])])
            out += processor.handleInputRows(("X",), rows, times)
        for expiry in sorted(t for t in handle.timers if t <= times.getCurrentWatermarkInMs()):
            out += processor.handleExpiredTimer(("X",), times, ExpiredTimerInfo(expiry))
            handle.timers.discard(expiry)
            handle.fired += 1
        emitted.append([row for frame in out for row in frame.to_dict("records")])
    return emitted, handle


def builtin(present: set[int]) -> dict[tuple, dict]:
    """The built-in sliding window's outputs over the seconds ``present``
    (engines.spark.transforms)."""

    def change(now: float, then: dict | None, field: str) -> float | None:
        return None if then is None or then[field] == 0 else (now - then[field]) / then[field]

    out = {}
    for last in present:
        now = tumbled(last)
        inside = [tumbled(s) for s in range(last - 2, last + 1) if s in present]
        short = tumbled(last - 1) if last - 1 in present else None
        long = tumbled(last - 2) if last - 2 in present else None
        out[("X", now[WINDOW_START] - 2 * SECOND_MS)] = {
            WINDOW_END: now[WINDOW_END],
            FLOW_SUM: now[FLOW_SUM],
            SPEED_AVG: now[SPEED_AVG],
            FLOW_CHANGE_SHORT: change(now[FLOW_SUM], short, FLOW_SUM),
            FLOW_CHANGE_LONG: change(now[FLOW_SUM], long, FLOW_SUM),
            SPEED_CHANGE_SHORT: change(now[SPEED_AVG], short, SPEED_AVG),
            SPEED_CHANGE_LONG: change(now[SPEED_AVG], long, SPEED_AVG),
            INPUT_TS_LATEST: max(r[INPUT_TS_LATEST] for r in inside),
            INPUT_TS_EARLIEST: min(r[INPUT_TS_EARLIEST] for r in inside),
            INPUT_COUNT: sum(r[INPUT_COUNT] for r in inside),
        }
    return out


def by_window(emitted: list[list[dict]]) -> dict[tuple, dict]:
    rows = [row for batch in emitted for row in batch]
    keyed = {(r[LOCATION_ID], r[WINDOW_START]): r for r in rows}
    assert len(keyed) == len(rows), "a window emitted twice"
    return {key: {k: None if pd.isna(v) else v for k, v in r.items()} for key, r in keyed.items()}


def last_seconds(batch: list[dict]) -> list[int]:
    return sorted((r[WINDOW_END] - T0) // SECOND_MS - 1 for r in batch)


def test_in_order_complete_seconds_are_emitted_on_arrival():
    # a location's first window waits for the watermark to pass the seconds before it
    emitted, handle = run([(START, [0]), (0, [1]), (1000, [2]), (2000, [3]), (30_000, [])])
    assert [last_seconds(b) for b in emitted] == [[], [0, 1], [2], [3], []]
    assert_rows_equal(by_window(emitted), builtin({0, 1, 2, 3}))
    assert handle.state.rows == {}  # all forgotten once the watermark passed them


def test_late_partial_second_holds_the_windows_it_belongs_to():
    # second 1 is partial: the tumbling timer emits it in the first batch whose
    # watermark passes its end, after the complete seconds 2 and 3
    emitted, _ = run([(START, [0]), (999, [2]), (1999, [3]), (2000, [1, 4]), (30_000, [])])
    assert [last_seconds(b) for b in emitted] == [[], [0], [], [1, 2, 3, 4], []]
    windows = by_window(emitted)
    assert_rows_equal(windows, builtin({0, 1, 2, 3, 4}))
    assert windows[("X", T0 + 1000)][INPUT_COUNT] == sum(tumbled(s)[INPUT_COUNT] for s in (1, 2, 3))


def test_second_that_never_comes_holds_windows_until_the_watermark_passes_it():
    # second 2 never comes; the timer emits windows 3 and 4 in a batch without data
    emitted, handle = run([(START, [0, 1]), (1000, [3, 4]), (2999, []), (3000, []), (30_000, [])])
    assert [last_seconds(b) for b in emitted] == [[], [0, 1], [], [3, 4], []]
    assert_rows_equal(by_window(emitted), builtin({0, 1, 3, 4}))
    assert handle.state.rows == {}


def test_a_busy_location_moves_its_cleanup_timer_every_ten_seconds_and_fires_none():
    seconds = range(2, 42)
    emitted, handle = run([(START, [0, 1]), *((s * SECOND_MS - 1500, [s]) for s in seconds)])
    assert sum(len(b) for b in emitted) == 42
    assert handle.fired == 2  # the timers of the first two windows, held at the start
    # and the cleanup timer, a window length after the newest second: at 10 s, moved to
    # 20, 30, 40 and 50 s as the seconds came
    assert handle.registered == 2 + 5
    # forgotten as they age: kept are seconds 37 to 41, less than a window length
    # behind the watermark (39.5 s)
    assert sorted(handle.state.rows) == [(T0 + s * SECOND_MS,) for s in range(37, 42)]


def test_windows_end_only_on_the_slide():
    handle = _Handle()
    processor = SlidingProcessor(4000, 2000, SHORT, LONG)
    processor.init(handle)
    rows = pd.DataFrame([tumbled(s) for s in range(4)])
    out = list(processor.handleInputRows(("X",), iter([rows]), TimerValues(0, T0 + 10_000)))
    ends = sorted(r[WINDOW_END] - T0 for frame in out for r in frame.to_dict("records"))
    assert ends == [2000, 4000]


@pytest.mark.parametrize("seed", range(300))
def test_every_arrival_order_gives_the_builtin_windows_once(seed):
    rng = random.Random(seed)
    seconds = range(12)
    watermarks = [START, 0]
    while watermarks[-1] < 13_000:
        watermarks.append(watermarks[-1] + rng.choice((0, 0, 500, 1000, 1000, 2500)))
    watermarks.append(60_000)
    arrivals: dict[int, list[int]] = {b: [] for b in range(len(watermarks))}
    present = set()
    for s in seconds:
        closes = next(b for b, w in enumerate(watermarks) if w >= (s + 1) * SECOND_MS)
        kind = rng.choice(("complete", "complete", "partial", "absent"))
        if kind == "absent":
            continue
        # a complete second comes before the watermark passes its end, a partial one as it does
        batch = rng.randrange(closes) if kind == "complete" and closes else closes
        arrivals[batch].append(s)
        present.add(s)
    emitted, handle = run([(w, arrivals[b]) for b, w in enumerate(watermarks)])
    assert_rows_equal(by_window(emitted), builtin(present))
    assert handle.state.rows == {}


def test_settle_forgets_no_second_a_held_window_needs():
    kept = {T0 + s * SECOND_MS: (1.0, 1.0, 0, 0, 1, int(s == 4), 0) for s in (0, 1, 2, 4)}
    settled = settle(kept, T0 + 3000, LENGTH)
    assert settled.ready == []  # window 4 waits for second 3
    assert settled.held == [T0 + 4000]
    assert settled.forget == [T0]  # in no window still to come
    settled = settle(kept, T0 + 9999, LENGTH)
    assert settled.ready == [T0 + 4000]
    assert sorted(settled.forget) == [T0, T0 + 1000, T0 + 2000]  # the newest names the timer
    assert forget_at(T0 + 4000, LENGTH) == T0 + 10_000  # T0 is a multiple of 10 s
    assert sorted(settle(kept, T0 + 10_000, LENGTH).forget) == sorted(kept)
