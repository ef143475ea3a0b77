"""Completeness: are all the outputs there, once each, and whole?

Compares the measured outputs with the outputs the inputs say must exist
(:mod:`evaluator.outputs.expected`), matched by the stage's identity
(:mod:`evaluator.topics.output_fields`). Counts, all over the measured period:

- ``outputs``: outputs received; ``expected``: outputs that must exist;
- ``missing``: expected outputs with no output of that identity at all;
- ``duplicates``: outputs beyond the first of their identity;
- ``unexpected``: outputs whose identity no input explains;
- ``partial_windows`` (the windows): expected location-seconds with fewer
  lanes than the location has; ``partial_window_outputs`` (the tumbling windows):
  outputs whose own ``lanes_seen`` is below their ``num_lanes``.

Missing outputs are also located (:func:`missing_section`): the broker seconds
their inputs were appended in and the first few, by identity, so a user can find
the inputs (ingest and parse: topic, partition, offset; the others: location,
lane and observation or window second).
"""

from typing import TypedDict

import numpy as np
import pandas as pd

from evaluator.outputs.checks import json_scalar, packed_keys
from evaluator.outputs.expected import unify_categories
from evaluator.topics.output_fields import output_schema
from ground import contract as s
from ground.stages import stage as stage_table

MISSING_EXAMPLES = 5
MISSING_SPANS = 20
"""Runs of consecutive seconds listed for missing outputs; the rest are counted."""


class Counts(TypedDict):
    """The completeness counts, the ``records`` keys of the same names (None: not
    compared with the inputs)."""

    outputs: int
    duplicates: int
    expected: int | None
    missing: int | None
    unexpected: int | None
    partial_windows: int | None
    partial_window_outputs: int | None


def empty_counts(outputs: int, duplicates: int) -> Counts:
    """The completeness counts before any comparison with the inputs: every count
    besides ``outputs`` and ``duplicates`` is None."""
    return Counts(
        outputs=outputs,
        duplicates=duplicates,
        expected=None,
        missing=None,
        unexpected=None,
        partial_windows=None,
        partial_window_outputs=None,
    )


def completeness(
    stage: str,
    identity: tuple[str, ...],
    outputs: pd.DataFrame,
    expected: pd.DataFrame | None,
    all_outputs: pd.DataFrame | None = None,
    all_expected: pd.DataFrame | None = None,
) -> Counts:
    """Counts for measured ``outputs`` vs measured ``expected`` (None: no inputs read).

    ``outputs`` and ``expected`` are restricted to the measured period;
    ``all_outputs`` and ``all_expected`` (default: the same) are the whole run,
    so an expected output is found even if the pipeline stamped it with a time
    outside the period, and an output is explained by any input of the run.
    """
    counts = empty_counts(len(outputs), duplicates(outputs, identity))
    if s.NUM_LANES in output_schema(stage).names and len(outputs):
        seen, lanes = outputs[s.LANES_SEEN], outputs[s.NUM_LANES]
        counts["partial_window_outputs"] = int((seen.notna() & (seen < lanes)).sum())
    elif s.NUM_LANES in output_schema(stage).names:
        counts["partial_window_outputs"] = 0
    if expected is None:
        return counts
    all_outputs = outputs if all_outputs is None else all_outputs
    all_expected = expected if all_expected is None else all_expected
    outputs, expected, all_outputs, all_expected = unify_categories(
        [outputs, expected, all_outputs, all_expected], identity
    )
    unique_out = all_outputs[list(identity)].drop_duplicates()
    matched = expected[list(identity)].merge(
        unique_out, on=list(identity), how="left", indicator=True
    )
    counts["expected"] = len(expected)
    counts["missing"] = int((matched["_merge"] != "both").sum())
    known = (
        outputs[list(identity)]
        .drop_duplicates()
        .merge(
            all_expected[list(identity)].drop_duplicates(),
            on=list(identity),
            how="left",
            indicator=True,
        )
    )
    counts["unexpected"] = int(
        _rows_of(outputs, identity, known.loc[known["_merge"] == "left_only", list(identity)])
    )
    if stage_table(stage).window:
        counts["partial_windows"] = int(
            (expected[s.LANES_SEEN].to_numpy() < expected[s.NUM_LANES].to_numpy()).sum()
        )
    return counts


def _rows_of(outputs: pd.DataFrame, identity: tuple[str, ...], keys: pd.DataFrame) -> int:
    """How many output records (duplicates included) carry one of ``keys``."""
    if keys.empty:
        return 0
    return len(outputs[list(identity)].merge(keys, on=list(identity), how="inner"))


def duplicates(frame: pd.DataFrame, identity: tuple[str, ...]) -> int:
    """Records beyond the first of their identity.

    Identity columns (categorical codes, integers) are packed into one int64
    when their ranges allow, which counts 10 M outputs in a few hundred MB
    instead of pandas' multi-column hashing (about 600 MB).
    """
    if len(frame) == 0:
        return 0
    keys = packed_keys([frame], identity)
    if keys is None:
        return int(frame.duplicated(list(identity)).sum())
    key = keys[0]
    key.sort()
    return int(len(key) - 1 - np.count_nonzero(key[1:] != key[:-1]))


def missing_section(seconds: pd.Series, examples: list[dict]) -> dict | None:
    """Where the missing outputs' inputs were appended; None when none is missing.

    ``seconds``: the count of missing outputs per broker second (epoch s) of their
    latest input; ``examples``: the first :data:`MISSING_EXAMPLES` of them (identity
    and ``input_ts_latest``). The seconds are folded into runs ``[first_s, last_s,
    count]`` of consecutive seconds, the first :data:`MISSING_SPANS` of them listed.
    """
    if seconds.empty:
        return None
    counts = seconds.sort_index()
    index = counts.index.to_numpy(np.int64)
    starts = np.flatnonzero(np.diff(index, prepend=index[0] - 2) != 1)
    ends = np.append(starts[1:], len(index))
    values = counts.to_numpy(np.int64)
    spans = [
        [int(index[a]), int(index[b - 1]), int(values[a:b].sum())]
        for a, b in zip(starts, ends, strict=True)
    ]
    return {
        "count": int(values.sum()),
        "spans": spans[:MISSING_SPANS],
        "spans_total": len(spans),
        "examples": examples,
    }


def missing_outputs(
    expected: pd.DataFrame, outputs: pd.DataFrame, identity: tuple[str, ...]
) -> dict | None:
    """:func:`missing_section` of the ``expected`` rows no output of ``outputs`` matches."""
    expected, outputs = unify_categories([expected, outputs], identity)
    matched = expected[[*identity, s.INPUT_TS_LATEST]].merge(
        outputs[list(identity)].drop_duplicates(), on=list(identity), how="left", indicator=True
    )
    lost = matched.loc[matched["_merge"] == "left_only"].drop(columns="_merge")
    # by value, not by category code: the order Spark's engine gives them in
    lost = lost.astype({c: object for c in identity if lost[c].dtype == "category"})
    lost = lost.sort_values([s.INPUT_TS_LATEST, *identity])
    examples = [
        {k: json_scalar(row[k]) for k in (*identity, s.INPUT_TS_LATEST)}
        for _, row in lost.head(MISSING_EXAMPLES).iterrows()
    ]
    return missing_section((lost[s.INPUT_TS_LATEST] // s.SECOND_MS).value_counts(), examples)
