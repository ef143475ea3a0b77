"""A user's own job: each output names the input it was computed from last (stage
``job``), or has a ladder stage's identity (a job claiming that stage), and the input
topics give what it need not carry.

A job of stage ``job`` writes ``source_topic``, ``source_partition`` and
``source_offset`` into each output, and may write ``input_ts_latest`` too
(docs/own-pipeline.md). Nothing else about its outputs is known, so the evaluator
measures them as it measures ingest's, one expected record per input: an output is
explained by the input it names, its latency is taken from that input's own timestamp,
a carried ``input_ts_latest`` is checked against it, and an output naming no input of
the run is unexpected (the run is not trusted). Inputs no output names are counted, not
missing: a filter drops inputs by design.

A job claiming a stage writes that stage's identity and values; what it carries of its
inputs (``input_ts_latest``, ``input_ts_earliest``, ``input_count``) is checked where it
carries it and taken from the expected output of the same identity where it does not,
as stage ``job``'s are. A stage written at every update (tumbling-union) is told apart
by what its updates carry, so there they stay required.
"""

import numpy as np
import pandas as pd

from evaluator.outputs.checks import lookup
from evaluator.topics.reader import TIMESTAMP
from ground import contract as s
from ground.stages import stage

CARRIED = (s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST, s.INPUT_COUNT)


def fills(stage_name: str) -> bool:
    """Whether a user's job of ``stage_name`` may leave out what it carries of its inputs."""
    return not stage(stage_name).updates


def filled(stage_name: str, outputs: pd.DataFrame, expected: pd.DataFrame | None) -> pd.DataFrame:
    """``outputs`` with what a job need not carry taken from the ``expected`` output of
    the same identity (None: no inputs read): ``input_ts_latest``, ``input_ts_earliest``
    and ``input_count`` where an output carries none; for stage ``job`` (one named input)
    ``input_ts_earliest`` and ``input_count`` always (the named input's timestamp, 1).
    An output no input explains takes its own timestamp instead, so that it is counted
    (unexpected) in the period it was written in. A shallow copy: the caller's frame is
    not changed."""
    frame = outputs.copy(deep=False)
    identity = list(stage(stage_name).identity)
    rows = np.full(len(frame), -1, np.int64)
    if expected is not None and len(frame):
        complete = frame[identity].notna().all(axis=1).to_numpy()
        if complete.any():
            subset = frame.loc[complete, identity].reset_index(drop=True)
            # numbers as int64, floats too (a column with nulls may come as one): a
            # float column would take lookup's pandas merge instead of its packed search
            whole = {c: np.int64 for c in identity if subset[c].dtype.kind in "iuf"}
            rows[complete] = lookup(subset.astype(whole), expected, identity)
    found = rows >= 0
    own = stage(stage_name).own
    stamp = frame[TIMESTAMP].to_numpy(np.int64)
    for column in CARRIED:
        derived = np.ones(len(frame), np.int64) if column == s.INPUT_COUNT else stamp.copy()
        if expected is not None:
            derived[found] = expected[column].to_numpy(np.int64)[rows[found]]
        carried = (
            pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
            if column in frame
            else np.full(len(frame), np.nan)
        )
        if own and column != s.INPUT_TS_LATEST:
            frame[column] = derived  # one named input: it is the earliest, and the only one
        else:
            frame[column] = np.where(np.isnan(carried), derived, carried).astype(np.int64)
    return frame
