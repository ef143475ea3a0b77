"""A window's latency split at the input that let it close (evaluator.latencies.closing)."""

import numpy as np
import pandas as pd
import pytest

from evaluator.latencies.closing import closing_times, split
from evaluator.latencies.latency import LATENCY
from evaluator.topics.reader import MALFORMED, OFFSET, PARTITION, TIMESTAMP, TIMESTAMP_TYPE, TOPIC
from ground import contract as s


def _inputs(rows: list[tuple[str, int, int]], malformed: tuple[int, ...] = ()) -> pd.DataFrame:
    """Inputs as (topic, broker ms, observation ms)."""
    n = len(rows)
    topic, broker, observed = zip(*rows, strict=True)
    speed = [1.0 if t == "speed" else None for t in topic]
    return pd.DataFrame(
        {
            TOPIC: pd.Categorical(topic), PARTITION: np.zeros(n, np.int32), OFFSET: np.arange(n),
            TIMESTAMP: np.array(broker, np.int64), TIMESTAMP_TYPE: 2,
            MALFORMED: [i in malformed for i in range(n)],
            s.LOCATION_ID: pd.Categorical(["A"] * n), s.LANE: 1,
            s.OBSERVATION_TS: np.array(observed, np.int64), s.SPEED: speed,
            s.FLOW: [None if v else 2.0 for v in speed], s.LATITUDE: 1.0, s.LONGITUDE: 1.0,
            s.NUM_LANES: 1, s.ACCURACY: 1.0, s.SEQ: 0, s.SCHEDULED_TS: 0,
        }
    )  # fmt: skip


# second 0's inputs at broker 100 and 120; the speed of second 1 comes at 1,050, its flow
# at 1,070; the speed of second 2 at 2,010, its flow never
INPUTS = [("speed", 100, 0), ("flow", 120, 0), ("speed", 1_050, 1_000), ("flow", 1_070, 1_000),
          ("speed", 2_010, 2_000)]  # fmt: skip


def test_a_watermark_waits_for_every_topic_stream_time_for_either():
    inputs = _inputs(INPUTS)
    ends = np.array([1_000, 2_000])
    least = closing_times(inputs, ends, 0, "least")
    assert least[0] == 1_070  # both topics past 1 s only with the flow of second 1
    assert np.isnan(least[1])  # the flow topic never reaches 2 s
    greatest = closing_times(inputs, ends, 0, "greatest")
    assert list(greatest) == [1_050, 2_010]  # the first input of either topic


def test_the_delay_moves_the_closing_input_later():
    inputs = _inputs(INPUTS)
    assert list(closing_times(inputs, np.array([1_000]), 1_000, "greatest")) == [2_010]


def test_a_malformed_input_closes_nothing():
    inputs = _inputs(INPUTS, malformed=(2,))
    assert list(closing_times(inputs, np.array([1_000]), 0, "greatest")) == [1_070]


def test_the_event_clock_never_goes_back_with_a_late_input():
    # a late input of second 0 after second 1's: the clock stays at 1 s
    inputs = _inputs([("speed", 100, 0), ("speed", 1_050, 1_000), ("speed", 1_060, 0)])
    assert list(closing_times(inputs, np.array([1_000]), 0, "greatest")) == [1_050]


def test_wait_and_engine_add_up_to_the_latency():
    inputs = _inputs(INPUTS)
    outputs = pd.DataFrame({s.WINDOW_START: [0, 1_000], TIMESTAMP: [1_080, 2_030]})
    outputs[LATENCY] = outputs[TIMESTAMP] - np.array([120, 1_070])  # from the latest inputs
    found = split(outputs, inputs, 1_000, 0, "greatest")
    assert found["windows"] == 2 and found["never_closed"] == 0
    assert found["wait_ms"]["min"] == 930 and found["wait_ms"]["max"] == 940  # 1,050 − 120
    assert found["engine_ms"]["min"] == 20 and found["engine_ms"]["max"] == 30
    total = found["wait_ms"]["mean"] + found["engine_ms"]["mean"]
    assert total == pytest.approx(outputs[LATENCY].mean())
    watermark = split(outputs, inputs, 1_000, 0, "least")
    assert watermark["windows"] == 1 and watermark["never_closed"] == 1
    assert watermark["wait_ms"]["p50"] == 950 and watermark["engine_ms"]["p50"] == 10
