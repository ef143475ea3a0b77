"""Input lateness in event time, and the engine's own count of rows dropped by the
watermark (evaluator.latencies.lateness)."""

import numpy as np
import pandas as pd
import pytest

from evaluator.latencies.lateness import dropped_by_watermark, input_lateness, lateness_ms
from evaluator.topics.reader import MALFORMED, TIMESTAMP, TOPIC
from ground import contract as s


def test_an_input_is_as_late_as_the_newest_event_time_appended_before_it():
    broker = np.array([1, 2, 3, 4, 5])
    events = np.array([1000, 2000, 1000, 2000, 0])
    assert lateness_ms(broker, events).tolist() == [0, 0, 1000, 0, 2000]


def test_inputs_of_one_broker_millisecond_are_not_before_one_another():
    broker = np.array([7, 7, 8])
    events = np.array([2000, 1000, 1000])
    assert lateness_ms(broker, events).tolist() == [0, 0, 1000]


def test_lateness_keeps_the_inputs_order_whatever_their_broker_order():
    broker = np.array([3, 1, 2])
    events = np.array([1000, 3000, 2000])
    assert lateness_ms(broker, events).tolist() == [2000, 0, 1000]
    assert lateness_ms(np.array([], dtype=np.int64), np.array([])).tolist() == []


def _inputs(broker: list[int], events: list[float], malformed: list[bool]) -> pd.DataFrame:
    n = len(broker)
    return pd.DataFrame(
        {
            TIMESTAMP: broker,
            MALFORMED: malformed,
            s.OBSERVATION_TS: events,
            s.SPEED: [80.0] * n,
            s.FLOW: [None] * n,
        }
    )


def test_the_section_counts_valid_inputs_and_those_at_or_past_the_delay():
    frame = _inputs(
        [1, 2, 3, 4, 5, 6],
        [2000, 2000, 1000, 0, 2000, 500],
        [False, False, False, False, False, True],
    )
    section = input_lateness(frame, delay_ms=2000)
    assert section["inputs"] == 5  # the malformed one has no event time to speak of
    assert section["late"] == 2
    assert section["max_ms"] == 2000
    assert section["watermark_delay_ms"] == 2000
    assert section["at_or_past_delay"] == 1
    assert section["p50_ms"] == 0.0
    assert section["p99_ms"] == pytest.approx(np.percentile([0, 0, 1000, 2000, 0], 99))


def test_with_no_delay_only_an_input_not_newer_than_one_before_it_is_past_it():
    frame = _inputs([1, 2, 3, 4], [0, 60_000, 120_000, 120_000], [False] * 4)
    section = input_lateness(frame, delay_ms=0)
    assert section["late"] == 0 and section["at_or_past_delay"] == 1


def test_no_valid_input_no_section_and_no_delay_no_count():
    assert input_lateness(_inputs([1], [0], [True]), delay_ms=1000) is None
    assert (
        input_lateness(_inputs([1, 2], [1000, 0], [False, False]), None)["at_or_past_delay"] is None
    )


def test_drops_are_summed_per_operator_over_progress_events_only():
    events = [
        {"event": "started"},
        {"event": "progress", "stateOperators": [
            {"operatorName": "symmetricHashJoin", "numRowsDroppedByWatermark": 2},
        ]},
        {"event": "progress", "stateOperators": [
            {"operatorName": "symmetricHashJoin", "numRowsDroppedByWatermark": 1},
            {"operatorName": "stateStoreSave", "numRowsDroppedByWatermark": 0},
        ]},
        {"event": "idle"},
    ]  # fmt: skip
    assert dropped_by_watermark(events) == {"symmetricHashJoin": 3, "stateStoreSave": 0}
    assert dropped_by_watermark([{"event": "progress", "stateOperators": []}]) is None


def test_lateness_within_a_topic_counts_only_that_topics_newer_inputs():
    """The join's watermark holds each side to its own topic: a flow behind a newer
    speed is late overall, not within its topic."""
    frame = _inputs([1, 2, 3, 4], [1000, 2000, 1000, 2000], [False] * 4)
    frame[TOPIC] = pd.Categorical(["speed", "speed", "flow", "flow"])
    section = input_lateness(frame, delay_ms=1)
    assert section["max_ms"] == 1000
    assert section["at_or_past_delay"] == 1
    assert section["within_topic"]["speed"]["max_ms"] == 0
    assert section["within_topic"]["flow"]["max_ms"] == 0
    assert section["within_topic"]["flow"]["at_or_past_delay"] == 0
