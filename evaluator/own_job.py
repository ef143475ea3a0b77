"""A user's own job (stage ``job``): each output names the input it was computed from
last, and the input topic gives that input's broker timestamp.

The job writes ``source_topic``, ``source_partition`` and ``source_offset`` into each
output, and may write ``input_ts_latest`` too (docs/own-pipeline.md). Nothing else about its
outputs is known, so the evaluator measures them as it measures ingest's, one expected
record per input: an output is explained by the input it names, its latency is taken
from that input's own timestamp, a carried ``input_ts_latest`` is checked against it,
and an output naming no input of the run is unexpected (the run is not trusted). Inputs
no output names are counted, not missing: a filter drops inputs by design.
"""

import numpy as np
import pandas as pd

from evaluator.checks import lookup
from evaluator.expected import expected_outputs
from evaluator.reader import TIMESTAMP
from ground import contract as s
from ground.stages import stage

IDENTITY = stage("job").identity


def filled(outputs: pd.DataFrame, inputs: pd.DataFrame | None) -> pd.DataFrame:
    """``outputs`` with what a job need not carry filled from the inputs they name:
    ``input_ts_latest`` where absent, ``input_ts_earliest`` and ``input_count`` (the named
    input's timestamp, 1) always. An output naming no input of the run takes its own
    timestamp instead, so that it is counted (unexpected) in the period it was written in.
    A shallow copy: the caller's frame is not changed."""
    frame = outputs.copy(deep=False)
    named = frame[TIMESTAMP].to_numpy(np.int64).copy()
    if inputs is not None and len(frame):
        records = expected_outputs("job", inputs)
        complete = frame[list(IDENTITY)].notna().all(axis=1).to_numpy()
        rows = np.full(len(frame), -1, np.int64)
        if complete.any():
            subset = frame.loc[complete, list(IDENTITY)].reset_index(drop=True)
            subset = subset.astype({s.SOURCE_PARTITION: np.int64, s.SOURCE_OFFSET: np.int64})
            rows[complete] = lookup(subset, records, IDENTITY)
        found = rows >= 0
        named[found] = records[s.INPUT_TS_LATEST].to_numpy(np.int64)[rows[found]]
    carried = (
        pd.to_numeric(frame[s.INPUT_TS_LATEST], errors="coerce").to_numpy(float)
        if s.INPUT_TS_LATEST in frame
        else np.full(len(frame), np.nan)
    )
    frame[s.INPUT_TS_LATEST] = np.where(np.isnan(carried), named, carried).astype(np.int64)
    frame[s.INPUT_TS_EARLIEST] = named
    frame[s.INPUT_COUNT] = np.ones(len(frame), np.int64)
    return frame
