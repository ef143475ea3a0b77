"""Carried timestamps, counts and values checked against the inputs, on hand-made frames."""

import numpy as np
import pandas as pd

from evaluator.outputs import checks
from evaluator.outputs.expected import expected_outputs
from ground import contract as s
from ground.stages import stage
from tests.evaluator.test_expected import ROWS, T0, valued

JOIN_ID = stage("join").identity


def _join() -> pd.DataFrame:
    return expected_outputs("join", valued(ROWS))


def test_lookup_finds_each_identity_and_marks_the_unknown():
    exp = _join()
    out = pd.concat([exp.iloc[::-1], exp.iloc[[0]].assign(**{s.LANE: 9})], ignore_index=True)
    rows = checks.lookup(out, exp, JOIN_ID)
    assert rows[-1] == -1
    found = exp.iloc[rows[:-1]][list(JOIN_ID)].to_numpy()
    assert (found == out.iloc[:-1][list(JOIN_ID)].to_numpy()).all()


def test_lookup_by_packed_keys_equals_a_merge():
    rng = np.random.default_rng(7)
    n = 3000
    locations = pd.Categorical.from_codes(rng.integers(0, 5, n), list("abcde"))
    frame = pd.DataFrame(
        {
            s.LOCATION_ID: locations,
            s.LANE: rng.integers(1, 4, n),
            s.OBSERVATION_TS: rng.integers(0, 40, n) * 1000 + T0,
        }
    )
    exp = frame.drop_duplicates().iloc[::2].reset_index(drop=True)
    packed = checks.lookup(frame, exp, JOIN_ID)
    # observation times as floats cannot be packed: the merge path
    merged = checks.lookup(
        frame.astype({s.OBSERVATION_TS: float}), exp.astype({s.OBSERVATION_TS: float}), JOIN_ID
    )
    assert (packed == merged).all()
    assert 0 < (packed == -1).sum() < n


def test_check_counts_each_carried_field_and_wrong_value():
    exp = _join()
    out = exp.copy()
    out.loc[0, s.INPUT_TS_LATEST] += 1
    out.loc[1, s.INPUT_TS_EARLIEST] -= 1
    out.loc[2, s.INPUT_COUNT] = 1
    out.loc[3, s.SPEED] += 0.5
    out.loc[4, s.FLOW] *= 1 + 1e-12  # summed in another order: not wrong
    out.loc[5, s.FLOW] = np.nan  # a value the output lacks
    counts, wrong = checks.check("join", out, exp, checks.lookup(out, exp, JOIN_ID), JOIN_ID)
    assert counts == {
        "input_ts_mismatch": 1,
        "input_ts_earliest_mismatch": 1,
        "input_count_mismatch": 1,
        "wrong_values": 2,
    }
    example = wrong[s.SPEED]["examples"][0]
    assert example["output"] == example["expected"] + 0.5
    assert {s.LOCATION_ID, s.LANE, s.OBSERVATION_TS} <= set(example)
    assert wrong[s.FLOW]["count"] == 1 and wrong[s.FLOW]["examples"][0]["output"] is None


def test_check_skips_outputs_no_input_explains():
    exp = _join()
    out = exp.iloc[[0]].assign(**{s.LANE: 9, s.INPUT_TS_LATEST: 0})
    counts, wrong = checks.check("join", out, exp, checks.lookup(out, exp, JOIN_ID), JOIN_ID)
    assert counts["input_ts_mismatch"] == 0 and wrong == {}


def test_sliding_changes_missing_on_both_sides_are_right():
    exp = expected_outputs("sliding", valued(ROWS))
    ident = stage("sliding").identity
    counts, wrong = checks.check("sliding", exp, exp, checks.lookup(exp, exp, ident), ident)
    assert exp[s.FLOW_CHANGE_SHORT].isna().any()
    assert counts["wrong_values"] == 0 and wrong == {}
