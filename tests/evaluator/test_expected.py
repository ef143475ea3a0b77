"""Expected outputs per stage and completeness, on hand-made input records."""

import numpy as np
import pandas as pd
import pytest

from evaluator.outputs.completeness import completeness, missing_outputs, missing_section
from evaluator.outputs.expected import expected_outputs
from evaluator.topics.reader import MALFORMED, OFFSET, PARTITION, TIMESTAMP, TIMESTAMP_TYPE, TOPIC
from ground import contract as s
from ground.stages import stage

T0 = 1_000_000


def inputs(rows: list[tuple]) -> pd.DataFrame:
    """rows: (topic, broker ts, location, lane, second, num_lanes[, malformed])."""
    recs = []
    for i, (topic, ts, loc, lane, sec, lanes, *bad) in enumerate(rows):
        recs.append(
            {
                TOPIC: topic, PARTITION: 0, OFFSET: i, TIMESTAMP: ts, TIMESTAMP_TYPE: 2,
                MALFORMED: bool(bad and bad[0]), s.LOCATION_ID: loc, s.LANE: lane,
                s.OBSERVATION_TS: T0 + sec * 1000, s.SPEED: 80.0 if topic == "speed" else None,
                s.FLOW: 5.0 if topic == "flow" else None, s.LATITUDE: 52.0, s.LONGITUDE: 5.0,
                s.NUM_LANES: lanes, s.ACCURACY: 95.0, s.SEQ: sec, s.SCHEDULED_TS: 1,
            }
        )  # fmt: skip
    frame = pd.DataFrame(recs)
    frame[TOPIC] = frame[TOPIC].astype("category")
    frame[s.LOCATION_ID] = frame[s.LOCATION_ID].astype("category")
    return frame


# location A has 2 lanes; second 1 lacks lane 2's flow; one malformed speed record
ROWS = [
    ("speed", 100, "A", 1, 0, 2), ("flow", 105, "A", 1, 0, 2),
    ("speed", 110, "A", 2, 0, 2), ("flow", 101, "A", 2, 0, 2),
    ("speed", 200, "A", 1, 1, 2), ("flow", 202, "A", 1, 1, 2),
    ("speed", 203, "A", 2, 1, 2),
    ("speed", 300, "A", 1, 2, 2), ("flow", 301, "A", 1, 2, 2),
    ("speed", 302, "A", 2, 2, 2), ("flow", 310, "A", 2, 2, 2),
    ("speed", 400, "A", 1, 4, 2), ("flow", 401, "A", 1, 4, 2),
    ("speed", 402, "A", 2, 4, 2, True),
]  # fmt: skip


def _by(frame, *keys):
    return frame.set_index(list(keys)).sort_index()


def test_ingest_expects_every_record_and_parse_only_valid_ones():
    frame = inputs(ROWS)
    assert len(expected_outputs("ingest", frame)) == len(ROWS)
    parse = expected_outputs("parse", frame)
    assert len(parse) == len(ROWS) - 1
    assert (parse[s.INPUT_TS_LATEST] == parse[s.INPUT_TS_EARLIEST]).all()


def test_join_pairs_carry_later_and_earlier_timestamp():
    join = _by(expected_outputs("join", inputs(ROWS)), s.LANE, s.OBSERVATION_TS)
    assert len(join) == 6  # (1,0) (2,0) (1,1) (1,2) (2,2) (1,4)
    assert join.loc[(2, T0), [s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST]].tolist() == [110, 101]
    assert (2, T0 + 1000) not in join.index


def test_tumbling_per_location_second_with_partial_windows():
    tum = _by(expected_outputs("tumbling", inputs(ROWS)), s.WINDOW_START)
    assert tum.index.tolist() == [T0, T0 + 1000, T0 + 2000, T0 + 4000]
    assert tum.loc[T0, s.INPUT_TS_LATEST] == 110 and tum.loc[T0, s.INPUT_TS_EARLIEST] == 100
    assert tum.loc[T0, s.INPUT_COUNT] == 4
    assert tum[s.LANES_SEEN].tolist() == [2, 1, 2, 1]
    assert tum.loc[T0, s.WINDOW_END] == T0 + 1000


def test_sliding_windows_end_at_each_present_second():
    sl = _by(expected_outputs("sliding", inputs(ROWS), sliding_window_s=3), s.WINDOW_END)
    assert sl.index.tolist() == [T0 + 1000, T0 + 2000, T0 + 3000, T0 + 5000]
    # window ending at second 2 covers seconds 0..2: all present
    row = sl.loc[T0 + 3000]
    assert row[s.WINDOW_START] == T0
    assert (row[s.INPUT_TS_LATEST], row[s.INPUT_TS_EARLIEST], row[s.INPUT_COUNT]) == (310, 100, 10)
    # window ending at second 4 covers 2..4 (3 missing): seconds 2 and 4
    row = sl.loc[T0 + 5000]
    assert (row[s.INPUT_TS_LATEST], row[s.INPUT_TS_EARLIEST], row[s.INPUT_COUNT]) == (401, 300, 6)


def test_completeness_counts_missing_duplicate_unexpected():
    exp = expected_outputs("join", inputs(ROWS))
    out = exp.copy()
    out = pd.concat([out.iloc[1:], out.iloc[[2]]], ignore_index=True)  # drop 0, repeat 2
    extra = out.iloc[[0]].assign(**{s.LANE: 9})
    out = pd.concat([out, extra], ignore_index=True)
    counts = completeness("join", stage("join").identity, out, exp)
    assert counts["outputs"] == len(out)
    assert counts["expected"] == 6
    assert counts["missing"] == 1
    assert counts["duplicates"] == 1
    assert counts["unexpected"] == 1


def test_missing_outputs_are_located_by_identity_and_broker_second():
    exp = expected_outputs("join", inputs(ROWS))
    identity = stage("join").identity
    assert missing_outputs(exp, exp, identity) is None
    first = exp.sort_values(s.INPUT_TS_LATEST).iloc[0]
    missing = missing_outputs(exp, exp.iloc[0:0], identity)
    assert missing["count"] == len(exp)
    assert missing["examples"][0] == {
        s.LOCATION_ID: first[s.LOCATION_ID], s.LANE: int(first[s.LANE]),
        s.OBSERVATION_TS: int(first[s.OBSERVATION_TS]),
        s.INPUT_TS_LATEST: int(first[s.INPUT_TS_LATEST]),
    }  # fmt: skip
    assert sum(n for _, _, n in missing["spans"]) == len(exp)


def test_missing_seconds_fold_into_runs_of_consecutive_seconds():
    seconds = pd.Series({12: 1, 10: 2, 11: 3, 20: 4, 22: 5})
    section = missing_section(seconds, [])
    assert section["spans"] == [[10, 12, 6], [20, 20, 4], [22, 22, 5]]
    assert (section["count"], section["spans_total"]) == (15, 3)
    assert missing_section(pd.Series(dtype=int), []) is None


def valued(rows: list[tuple]) -> pd.DataFrame:
    """``inputs(rows)`` with distinct values: speed = broker ts / 10, flow = broker ts − 100."""
    frame = inputs(rows)
    is_speed = frame[TOPIC] == "speed"
    frame[s.SPEED] = np.where(is_speed, frame[TIMESTAMP] / 10, np.nan)
    frame[s.FLOW] = np.where(is_speed, np.nan, frame[TIMESTAMP] - 100.0)
    return frame


def test_parse_and_join_expect_the_input_values():
    parse = expected_outputs("parse", valued(ROWS))
    assert parse[s.SPEED].iloc[0] == 10.0 and np.isnan(parse[s.FLOW].iloc[0])
    join = _by(expected_outputs("join", valued(ROWS)), s.LANE, s.OBSERVATION_TS)
    assert join.loc[(2, T0), [s.SPEED, s.FLOW]].tolist() == [11.0, 1.0]


def test_tumbling_values_sum_flow_and_average_speed():
    tum = _by(expected_outputs("tumbling", valued(ROWS)), s.WINDOW_START)
    # second 0: lanes 1 (speed 10.0, flow 5) and 2 (speed 11.0, flow 1)
    assert tum.loc[T0, [s.FLOW_SUM, s.SPEED_AVG, s.LANES_SEEN]].tolist() == [6.0, 10.5, 2]
    # second 2: lanes 1 (30.0, 201) and 2 (30.2, 210)
    assert tum.loc[T0 + 2000, s.FLOW_SUM] == 411.0
    assert tum.loc[T0 + 2000, s.SPEED_AVG] == pytest.approx(30.1)


def test_sliding_changes_against_the_lookback_seconds():
    sl = _by(
        expected_outputs("sliding", valued(ROWS), sliding_window_s=3, lookbacks_s=(1, 2)),
        s.WINDOW_END,
    )
    flows = {0: 6.0, 1: 102.0, 2: 411.0, 4: 301.0}  # tumbling flow sums per second
    speeds = {0: 10.5, 1: 20.0, 2: 30.1, 4: 40.0}
    row = sl.loc[T0 + 3000]  # last second 2
    assert row[s.FLOW_SUM] == 411.0
    assert row[s.FLOW_CHANGE_SHORT] == pytest.approx((411 - 102) / 102)
    assert row[s.FLOW_CHANGE_LONG] == pytest.approx((411 - 6) / 6)
    assert row[s.SPEED_CHANGE_SHORT] == pytest.approx((speeds[2] - speeds[1]) / speeds[1])
    assert row[s.SPEED_CHANGE_LONG] == pytest.approx((speeds[2] - speeds[0]) / speeds[0])
    row = sl.loc[T0 + 5000]  # last second 4: second 3 is missing, second 2 is there
    assert np.isnan(row[s.FLOW_CHANGE_SHORT]) and np.isnan(row[s.SPEED_CHANGE_SHORT])
    assert row[s.FLOW_CHANGE_LONG] == pytest.approx((flows[4] - flows[2]) / flows[2])
    row = sl.loc[T0 + 1000]  # last second 0: nothing before it
    assert row[[s.FLOW_CHANGE_SHORT, s.FLOW_CHANGE_LONG]].isna().all()


def test_sliding_change_against_zero_is_missing():
    frame = valued(ROWS)
    frame.loc[frame[TIMESTAMP].isin([105, 101]), s.FLOW] = 0.0  # second 0's flows
    sl = _by(expected_outputs("sliding", frame, sliding_window_s=3), s.WINDOW_END)
    assert np.isnan(sl.loc[T0 + 2000, s.FLOW_CHANGE_SHORT])
    assert sl.loc[T0 + 2000, s.SPEED_CHANGE_SHORT] == pytest.approx((20.0 - 10.5) / 10.5)


def test_completeness_partial_windows_and_outputs():
    exp = expected_outputs("tumbling", inputs(ROWS))
    out = exp.copy()
    counts = completeness("tumbling", stage("tumbling").identity, out, exp)
    assert counts["partial_windows"] == 2
    assert counts["partial_window_outputs"] == 2
    assert counts["missing"] == 0 and counts["duplicates"] == 0


def test_completeness_without_inputs_counts_only_outputs():
    exp = expected_outputs("join", inputs(ROWS))
    counts = completeness("join", stage("join").identity, pd.concat([exp, exp.iloc[:2]]), None)
    assert counts["duplicates"] == 2
    assert counts["expected"] is None and counts["missing"] is None


def test_identity_matches_across_different_categories():
    exp = expected_outputs("join", inputs(ROWS))
    out = exp.copy()
    out[s.LOCATION_ID] = pd.Categorical(np.array(["A"] * len(out)), categories=["Z", "A"])
    assert completeness("join", stage("join").identity, out, exp)["missing"] == 0


def test_duplicates_by_packed_identity_equal_pandas():
    from evaluator.outputs.completeness import duplicates

    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame(
        {
            s.LOCATION_ID: pd.Categorical.from_codes(rng.integers(-1, 4, n), ["a", "b", "c", "d"]),
            s.LANE: rng.integers(1, 4, n),
            s.OBSERVATION_TS: rng.integers(0, 30, n) * 1000 + T0,
        }
    )
    want = int(frame.duplicated(list(stage("join").identity)).sum())
    assert 0 < want < n
    assert duplicates(frame, stage("join").identity) == want
