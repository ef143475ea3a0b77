"""What the pipeline says about its outputs, checked against what the inputs say.

Every output carries fields the evaluator could simply believe: the broker
timestamps of its inputs (``input_ts_latest``, ``input_ts_earliest``), how many
inputs it was computed from (``input_count``) and its values (speed and flow,
flow sums, mean speeds, lanes seen, relative changes). The evaluator believes
none of them. It derives each from the input topics
(:func:`evaluator.outputs.expected.expected_outputs`), finds each output's expected
twin by the stage's identity (:func:`lookup`), computes latency from the
derived timestamps (:mod:`evaluator.latencies.latency`), and counts every carried field
and value that disagrees: a pipeline defect, reported per field with examples,
never averaged into a number.
"""

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from evaluator.outputs.expected import unify_categories
from evaluator.topics.output_fields import VALUES
from evaluator.topics.reader import OFFSET, PARTITION
from ground import contract as s

CARRIED = (s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST, s.INPUT_COUNT)
"""The fields an output carries about its inputs, in the order of :class:`Carried`'s
counts."""
EXAMPLES = 3
"""Examples kept per wrong field."""
RTOL = 1e-9
"""Relative tolerance of value checks: sums and means in another order differ in the last bits."""


class Carried(TypedDict):
    """The ``records`` counts of wrong carried fields and values (None: nothing checked)."""

    input_ts_mismatch: int | None
    input_ts_earliest_mismatch: int | None
    input_count_mismatch: int | None
    wrong_values: int | None
    """Outputs with at least one wrong value."""


def lookup(outputs: pd.DataFrame, expected: pd.DataFrame, identity: Sequence[str]) -> np.ndarray:
    """For each output, the row of ``expected`` with the same identity, or -1 (unexpected).

    ``expected`` has one row per identity. The identity columns (categorical codes,
    integers) are packed into one int64 and looked up with a binary search, which
    handles ten million outputs in seconds and little memory; a pandas merge does
    it when the ranges do not fit.
    """
    if len(outputs) == 0 or len(expected) == 0:
        return np.full(len(outputs), -1, np.int64)
    outputs, expected = unify_categories([outputs, expected], tuple(identity))
    keys = packed_keys([outputs, expected], identity)
    if keys is None:
        rows = (
            outputs[list(identity)]
            .merge(expected[list(identity)].assign(_row=np.arange(len(expected))), how="left")
            ["_row"]
        )  # fmt: skip
        found: np.ndarray = rows.fillna(-1).to_numpy(np.int64)
        return found
    out_key, exp_key = keys
    order = np.argsort(exp_key, kind="stable")
    sorted_keys = exp_key[order]
    pos = np.minimum(np.searchsorted(sorted_keys, out_key), len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == out_key, order[pos], -1).astype(np.int64)


def packed_keys(frames: Sequence[pd.DataFrame], identity: Sequence[str]) -> list[np.ndarray] | None:
    """One int64 key per row of each frame from its identity columns (None: too wide).

    Categorical columns must share their categories (:func:`unify_categories`);
    a null category packs as 0. Equal identities give equal keys across the frames.
    """
    keys = [np.zeros(len(f), np.int64) for f in frames]
    radix = 1
    for name in identity:
        columns = [f[name] for f in frames]
        if all(isinstance(c.dtype, pd.CategoricalDtype) for c in columns):
            codes = [c.cat.codes.to_numpy().astype(np.int64) + 1 for c in columns]
        elif all(c.dtype.kind in "iu" for c in columns):
            low = min(int(c.min()) for c in columns if len(c))
            codes = [c.to_numpy(np.int64) - low for c in columns]
        else:
            return None
        span = max(int(c.max()) for c in codes if len(c)) + 1
        radix *= span
        if radix >= 2**62:
            return None
        keys = [k * span + c for k, c in zip(keys, codes, strict=True)]
    return keys


def derived(
    outputs: pd.DataFrame, expected: pd.DataFrame, rows: np.ndarray, column: str
) -> np.ndarray:
    """``expected[column]`` for each output (the output's own value where ``rows`` is -1)."""
    own = outputs[column].to_numpy()
    found = rows >= 0
    values: np.ndarray = own.copy()
    values[found] = expected[column].to_numpy()[rows[found]]
    return values


def check(
    stage: str,
    outputs: pd.DataFrame,
    expected: pd.DataFrame,
    rows: np.ndarray,
    identity: Sequence[str],
) -> tuple[Carried, dict[str, dict]]:
    """Carried fields and values of the explained ``outputs`` against ``expected``.

    Returns the ``records`` counts (:class:`Carried`) and, per wrong field, its count and up to
    :data:`EXAMPLES` examples ``{identity…, output, expected}``, the first by partition
    and offset. A missing value
    (null) is wrong unless the expected value is missing too.
    """
    found = rows >= 0
    values = [f for f in VALUES.get(stage, ()) if f in outputs and f in expected]
    columns = list(dict.fromkeys((*identity, *CARRIED, *values, PARTITION, OFFSET)))
    # only the compared columns are copied: ten million outputs stay affordable
    out = outputs.loc[found, [c for c in columns if c in outputs]].reset_index(drop=True)
    exp = expected.iloc[rows[found]][[c for c in columns if c in expected]]
    exp = exp.reset_index(drop=True)
    mismatches, wrong = [], {}
    any_value_wrong = np.zeros(len(out), bool)
    for field in CARRIED:
        bad = _differs(out[field], exp[field], exact=True)
        mismatches.append(int(bad.sum()))
        if bad.any():
            wrong[field] = _examples(out, exp, bad, field, identity)
    for field in values:
        bad = _differs(out[field], exp[field], exact=False)
        any_value_wrong |= bad
        if bad.any():
            wrong[field] = _examples(out, exp, bad, field, identity)
    latest, earliest, count = mismatches
    counts = Carried(
        input_ts_mismatch=latest,
        input_ts_earliest_mismatch=earliest,
        input_count_mismatch=count,
        wrong_values=int(any_value_wrong.sum()),
    )
    return counts, wrong


def _differs(got: pd.Series, want: pd.Series, exact: bool) -> np.ndarray:
    a, b = got.to_numpy(float), want.to_numpy(float)
    missing_a, missing_b = np.isnan(a), np.isnan(b)
    differs = a != b if exact else ~np.isclose(a, b, rtol=RTOL, atol=RTOL)
    wrong: np.ndarray = (missing_a != missing_b) | (~missing_a & ~missing_b & differs)
    return wrong


def _examples(
    out: pd.DataFrame, exp: pd.DataFrame, bad: np.ndarray, field: str, identity: Sequence[str]
) -> dict:
    picked = np.flatnonzero(bad)
    if PARTITION in out and OFFSET in out:  # the first by partition and offset, as Spark's
        where = out.iloc[picked]
        picked = picked[np.lexsort((where[OFFSET].to_numpy(), where[PARTITION].to_numpy()))]
    picked = picked[:EXAMPLES]
    return {
        "count": int(bad.sum()),
        "examples": [
            {
                **{k: json_scalar(out[k].iloc[i]) for k in identity},
                "output": json_scalar(out[field].iloc[i]),
                "expected": json_scalar(exp[field].iloc[i]),
            }
            for i in picked
        ],
    }


def json_scalar(value: Any) -> Any:
    """A JSON-friendly scalar (numpy and pandas types, NaN and pandas NA as None)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
        return None if isinstance(value, float) and np.isnan(value) else value
    return value
