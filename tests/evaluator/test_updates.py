"""A stage written at every update (tumbling-union): each window's first update, its
complete one, partial updates neither duplicates nor wrong, a window never complete
missing; checked through the whole measurement on hand-made topics."""

import numpy as np
import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.latencies.updates import split_updates
from evaluator.measure import measure
from evaluator.model.run_info import RunInfo
from evaluator.outputs.expected import expected_outputs
from evaluator.summary import build_summary
from evaluator.topics.reader import MALFORMED, OFFSET, PARTITION, TIMESTAMP, TIMESTAMP_TYPE, TOPIC
from ground import contract as s
from ground.stages import stage

RUN = RunInfo(id="r1", stage="tumbling-union", output_topic="out", input_topics=("s", "f"))
SECOND = 10_000_000  # an event-time second (epoch ms) of the windows below


def _inputs() -> pd.DataFrame:
    """Location A, second SECOND: lane 1 speed and flow, lane 2 speed and flow (broker
    times 100, 110, 120, 130); location B: one speed (200) and its flow (210)."""
    rows = [
        ("A", 1, "speed", 80.0, 100),
        ("A", 1, "flow", 10.0, 110),
        ("A", 2, "speed", 60.0, 120),
        ("A", 2, "flow", 20.0, 130),
        ("B", 1, "speed", 50.0, 200),
        ("B", 1, "flow", 5.0, 210),
    ]
    n = len(rows)
    return pd.DataFrame(
        {
            TOPIC: pd.Categorical([r[2] for r in rows]), PARTITION: np.zeros(n, np.int32),
            OFFSET: np.arange(n), TIMESTAMP: [r[4] for r in rows], TIMESTAMP_TYPE: 2,
            MALFORMED: False, s.LOCATION_ID: pd.Categorical([r[0] for r in rows]),
            s.LANE: [r[1] for r in rows], s.OBSERVATION_TS: SECOND + 500,
            s.SPEED: [r[3] if r[2] == "speed" else None for r in rows],
            s.FLOW: [r[3] if r[2] == "flow" else None for r in rows],
            s.LATITUDE: 1.0, s.LONGITUDE: 1.0, s.NUM_LANES: 2, s.ACCURACY: 1.0, s.SEQ: 0,
            s.SCHEDULED_TS: 0,
        }
    )  # fmt: skip


def _update(location, ts, count, latest, earliest, flow_sum, speed_avg, lanes):
    return {
        s.LOCATION_ID: location, s.WINDOW_START: SECOND, s.WINDOW_END: SECOND + 1000,
        TIMESTAMP: ts, s.INPUT_COUNT: count, s.INPUT_TS_LATEST: latest,
        s.INPUT_TS_EARLIEST: earliest, s.FLOW_SUM: flow_sum, s.SPEED_AVG: speed_avg,
        s.LANES_SEEN: lanes, s.NUM_LANES: 2,
    }  # fmt: skip


def _outputs(updates: list[dict]) -> pd.DataFrame:
    """The updates as read from one partition (offsets in broker-time order), in the
    order given."""
    frame = pd.DataFrame(updates)
    frame[s.LOCATION_ID] = pd.Categorical(frame[s.LOCATION_ID])
    frame[PARTITION] = np.zeros(len(frame), np.int32)
    frame[OFFSET] = frame[TIMESTAMP].rank(method="first").astype(np.int64) - 1
    frame[TIMESTAMP_TYPE] = 2
    frame[MALFORMED] = False
    return frame


A_UPDATES = [
    # A's first update: lane 1's speed alone, 5 ms after it
    _update("A", 105, 1, 100, 100, None, 80.0, 1),
    _update("A", 125, 3, 120, 100, 10.0, 70.0, 2),
    # complete: all four inputs, 20 ms after the last (130)
    _update("A", 150, 4, 130, 100, 30.0, 70.0, 2),
]


def test_expected_window_holds_both_kinds_of_every_lane():
    expected = expected_outputs("tumbling-union", _inputs()).set_index(s.LOCATION_ID)
    a, b = expected.loc["A"], expected.loc["B"]
    assert (a[s.INPUT_COUNT], a[s.INPUT_TS_LATEST], a[s.INPUT_TS_EARLIEST]) == (4, 130, 100)
    assert (a[s.FLOW_SUM], a[s.SPEED_AVG], a[s.LANES_SEEN]) == (30.0, 70.0, 2)
    assert (b[s.INPUT_COUNT], b[s.FLOW_SUM], b[s.WINDOW_END]) == (2, 5.0, SECOND + 1000)


def test_expected_flow_sum_is_missing_without_a_flow():
    inputs = _inputs().iloc[:1]  # A's lane 1 speed only
    expected = expected_outputs("tumbling-union", inputs)
    assert np.isnan(expected[s.FLOW_SUM].iloc[0]) and expected[s.SPEED_AVG].iloc[0] == 80.0


def test_split_keeps_each_windows_complete_update_and_counts_the_rest():
    b_complete = _update("B", 230, 2, 210, 200, 5.0, 50.0, 1)
    outputs = _outputs([A_UPDATES[2], b_complete, A_UPDATES[0], A_UPDATES[1]])
    expected = expected_outputs("tumbling-union", _inputs())
    kept, updates = split_updates(outputs, expected, stage("tumbling-union").identity)
    assert sorted(kept[TIMESTAMP]) == [150, 230]
    by_window = dict(zip(expected[s.LOCATION_ID].astype(str), range(len(expected)), strict=True))
    a, b = by_window["A"], by_window["B"]
    assert updates.complete.all()
    assert updates.updates[a] == 3 and updates.updates[b] == 1
    assert updates.first_update_ms[a] == 5 and updates.first_update_ms[b] == 20
    assert not updates.first_carried_outside.any()
    section = updates.section(np.ones(2, bool))
    assert section["partial_updates"] == 2 and section["never_complete"] == 0
    assert section["per_window"] == {"mean": 2.0, "p50": 2.0, "max": 3}


def test_whole_measurement_complete_window_latency_and_no_duplicates():
    outputs = _outputs([*A_UPDATES, _update("B", 230, 2, 210, 200, 5.0, 50.0, 1)])
    config = EvaluatorConfig(warmup_s=0, end_cut_s=0)
    result = measure(RUN, config, outputs, _inputs())
    rec = result.records
    assert (rec.outputs, rec.duplicates, rec.missing, rec.expected) == (2, 0, 0, 2)
    assert rec.wrong_values == 0 and rec.input_count_mismatch == 0
    assert result.latency_ms["max"] == 20 and result.latency_ms["min"] == 20
    assert result.updates["first_update_ms"]["min"] == 5
    summary = build_summary(RUN, config, "x:1", result).as_dict()
    assert summary["trusted"] is True and summary["updates"]["complete"] == 2


def test_window_never_complete_is_missing_and_its_updates_not_wrong():
    # B's flow never reaches the output: only the update with its speed
    outputs = _outputs([*A_UPDATES, _update("B", 205, 1, 200, 200, None, 50.0, 1)])
    result = measure(RUN, EvaluatorConfig(warmup_s=0, end_cut_s=0), outputs, _inputs())
    rec = result.records
    assert (rec.outputs, rec.missing, rec.wrong_values, rec.duplicates) == (1, 1, 0, 0)
    assert result.updates["never_complete"] == 1 and result.updates["partial_updates"] == 3


def test_update_after_the_complete_one_is_a_duplicate():
    again = _update("A", 160, 4, 130, 100, 30.0, 70.0, 2)
    outputs = _outputs([*A_UPDATES, again])
    result = measure(RUN, EvaluatorConfig(warmup_s=0, end_cut_s=0), outputs, _inputs())
    assert result.records.duplicates == 1


def test_an_update_claiming_more_inputs_than_the_window_has_is_wrong_not_missing():
    inflated = _update("A", 150, 5, 130, 100, 30.0, 70.0, 2)
    outputs = _outputs([*A_UPDATES[:2], inflated])
    result = measure(RUN, EvaluatorConfig(warmup_s=0, end_cut_s=0), outputs, _inputs())
    rec = result.records
    assert (rec.missing, rec.input_count_mismatch) == (1, 1)  # B has no output at all
    assert result.updates["complete"] == 1


def test_first_update_carrying_a_time_no_input_has_is_flagged():
    wrong = _update("A", 105, 1, 99, 99, None, 80.0, 1)
    outputs = _outputs([wrong, *A_UPDATES[1:]])
    expected = expected_outputs("tumbling-union", _inputs())
    _, updates = split_updates(outputs, expected, stage("tumbling-union").identity)
    assert updates.first_carried_outside.sum() == 1
