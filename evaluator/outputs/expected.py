"""What each stage's outputs should be, computed from the input topics.

The reference semantics of the stage ladder (docs/method.md#completeness), evaluated in pandas on
the raw input records: one row per output that must exist, with its identity
(see :mod:`evaluator.topics.output_fields`) and the input timestamps it must carry. The same
time rule that selects measured outputs selects measured expected rows (by
``input_ts_latest``), so completeness compares like with like.
"""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluator.topics import reader
from evaluator.topics.reader import KIND, MALFORMED, OFFSET, PARTITION, TIMESTAMP, TOPIC
from ground import contract as s
from ground import malformed as m
from ground.contract import SECOND_MS
from ground.stages import stage as stage_table

CHECKED_ONLY = (s.LATITUDE, s.LONGITUDE, s.ACCURACY, s.SEQ)
"""Input fields that must be present but that nothing measured uses: the reader checks
them and drops their columns (``scheduled_ts`` is kept: :mod:`evaluator.latencies.intended`)."""


def input_line_parser(value: bytes | None, schema: pa.Schema) -> dict | None:
    """One input value checked with :func:`ground.malformed.classify`; None if malformed."""
    if m.classify(value) is not None:
        return None
    return reader.strict_line_parser(value, schema)


def input_kinds(values: list, table: pa.Table, malformed: np.ndarray) -> np.ndarray:
    """The kind of each input of a parsed batch: its index in :data:`ground.malformed.KINDS`,
    -1 when valid (a :data:`evaluator.topics.reader.Classifier`).

    Only suspects are classified one by one, so a batch of valid inputs costs a few
    vectorised checks: values the parse refused and bulk-parsed ones that are too
    long, have a null or empty field, not exactly one measurement, or a number out
    of its range (pyarrow already refused unknown fields, wrong types and bad UTF-8).
    """
    suspect = malformed | np.fromiter(
        (v is None or len(v) > m.MAX_INPUT_BYTES for v in values), bool, len(values)
    )
    nulls = {name: table.column(name).is_null() for name in table.column_names}
    for name in s.REQUIRED_FIELDS:
        suspect |= nulls[name].to_numpy(zero_copy_only=False)
    suspect |= pc.equal(nulls[s.SPEED], nulls[s.FLOW]).to_numpy(zero_copy_only=False)
    empty = pc.equal(table.column(s.LOCATION_ID), "")
    suspect |= empty.fill_null(False).to_numpy(zero_copy_only=False)
    for name, (low, high) in m.RANGES.items():
        column = table.column(name)
        inside = pc.and_(pc.greater_equal(column, low), pc.less_equal(column, high))
        suspect |= ~inside.fill_null(True).to_numpy(zero_copy_only=False)
    codes = np.full(len(values), -1, np.int8)
    for i in np.flatnonzero(suspect):
        kind = m.classify(values[i])
        if kind is not None:
            codes[i] = m.KINDS.index(kind)
    return codes


def malformed_by_kind(inputs: pd.DataFrame) -> dict[str, int]:
    """Malformed inputs per kind of :data:`ground.malformed.KINDS` (read with
    :func:`input_kinds`), every kind listed."""
    counts = np.bincount(inputs[KIND].to_numpy(np.int64) + 1, minlength=len(m.KINDS) + 1)
    return {kind: int(n) for kind, n in zip(m.KINDS, counts[1:], strict=True)}


def valid_mask(inputs: pd.DataFrame) -> np.ndarray:
    """Inputs that pass the contract (:mod:`ground.malformed`): not malformed to the
    reader (:func:`input_kinds`), every required field, one measurement."""
    required = [c for c in inputs.columns if c in s.INPUT_FIELDS and c not in s.KINDS]
    ok: np.ndarray = ~inputs[MALFORMED].to_numpy(bool)
    for col in required:
        ok &= inputs[col].notna().to_numpy()
    ok &= inputs[s.SPEED].notna().to_numpy() != inputs[s.FLOW].notna().to_numpy()
    return ok


def unify_categories(frames: list[pd.DataFrame], columns: tuple[str, ...]) -> list[pd.DataFrame]:
    """Give categorical ``columns`` the same categories in every frame, so they
    concatenate and merge as categoricals instead of falling back to objects."""
    result = [f.copy(deep=False) for f in frames]
    for col in columns:
        present = [f[col] for f in result if col in f]
        if not any(isinstance(c.dtype, pd.CategoricalDtype) for c in present):
            continue
        values: set = set()
        for c in present:
            is_cat = isinstance(c.dtype, pd.CategoricalDtype)
            values.update(c.cat.categories if is_cat else c.dropna().unique())
        union = pd.Index(sorted(values))
        for f in result:
            if col in f:
                f[col] = pd.Categorical(f[col], categories=union)
    return result


def expected_outputs(
    stage: str,
    inputs: pd.DataFrame,
    sliding_window_s: int = 3,
    lookbacks_s: tuple[int, int] = (1, 2),
) -> pd.DataFrame:
    """The outputs ``stage`` must produce from ``inputs`` (the read input topics).

    Columns: the stage's identity, ``input_ts_latest``, ``input_ts_earliest``,
    ``input_count``, and the values :data:`evaluator.topics.output_fields.VALUES` names
    (parse and join: speed and flow; tumbling: flow sum, mean speed, lanes
    seen; sliding: those of the window's last second and the relative changes
    against ``lookbacks_s`` seconds before it); the windows also ``lanes_seen`` and
    ``num_lanes`` (sliding: of the window's last second).
    """
    if stage_table(stage).raw:
        return _records(inputs)
    valid = inputs[valid_mask(inputs)] if len(inputs) else inputs.iloc[0:0]
    if stage == "parse":
        return _records(valid, values=True)
    if stage == "tumbling-union":
        return _tumbling_union(valid)
    joined = _join(valid)
    if stage == "join":
        return joined
    tumbling = _tumbling(joined)
    if stage == "tumbling":
        return tumbling
    if stage == "sliding":
        return _sliding(tumbling, sliding_window_s, lookbacks_s)
    raise ValueError(f"unknown stage {stage!r}")


def _records(inputs: pd.DataFrame, values: bool = False) -> pd.DataFrame:
    """ingest and parse: one output per input record, carrying its own timestamp
    (parse: and its speed or flow)."""
    columns = {
        s.SOURCE_TOPIC: inputs[TOPIC].astype("category"),
        s.SOURCE_PARTITION: inputs[PARTITION].astype(np.int32),
        s.SOURCE_OFFSET: inputs[OFFSET].astype(np.int64),
        s.INPUT_TS_LATEST: inputs[TIMESTAMP].astype(np.int64),
        s.INPUT_TS_EARLIEST: inputs[TIMESTAMP].astype(np.int64),
        s.INPUT_COUNT: np.ones(len(inputs), np.int64),
    }
    if values:
        columns.update({k: inputs[k].astype(float) for k in s.KINDS})
    return pd.DataFrame(columns).reset_index(drop=True)


def _join(valid: pd.DataFrame) -> pd.DataFrame:
    """One output per (location, lane, observation time) present in both kinds."""
    key = [s.LOCATION_ID, s.LANE, s.OBSERVATION_TS]
    cols = [*key, TIMESTAMP, s.NUM_LANES]
    speed = valid.loc[valid[s.SPEED].notna(), [*cols, s.SPEED]].drop_duplicates(key)
    flow = valid.loc[valid[s.FLOW].notna(), [*cols, s.FLOW]].drop_duplicates(key)
    both = speed.merge(flow, on=key, suffixes=("_s", "_f"), how="inner")
    ts_s, ts_f = both[f"{TIMESTAMP}_s"].to_numpy(), both[f"{TIMESTAMP}_f"].to_numpy()
    out = both[[*key, s.SPEED, s.FLOW]].copy()
    out[s.INPUT_TS_LATEST] = np.maximum(ts_s, ts_f).astype(np.int64)
    out[s.INPUT_TS_EARLIEST] = np.minimum(ts_s, ts_f).astype(np.int64)
    out[s.INPUT_COUNT] = np.full(len(out), 2, np.int64)
    out[s.NUM_LANES] = np.maximum(both[f"{s.NUM_LANES}_s"], both[f"{s.NUM_LANES}_f"]).astype(
        np.int64
    )
    return out.reset_index(drop=True)


def _tumbling(joined: pd.DataFrame) -> pd.DataFrame:
    """One output per location-second of the join output."""
    frame = joined.assign(**{s.WINDOW_START: joined[s.OBSERVATION_TS] // SECOND_MS * SECOND_MS})
    grouped = frame.groupby([s.LOCATION_ID, s.WINDOW_START], observed=True, sort=False)
    out = grouped.agg(
        **{
            s.INPUT_TS_LATEST: (s.INPUT_TS_LATEST, "max"),
            s.INPUT_TS_EARLIEST: (s.INPUT_TS_EARLIEST, "min"),
            s.INPUT_COUNT: (s.INPUT_COUNT, "sum"),
            s.LANES_SEEN: (s.LANE, "nunique"),
            s.NUM_LANES: (s.NUM_LANES, "max"),
            s.FLOW_SUM: (s.FLOW, "sum"),
            s.SPEED_AVG: (s.SPEED, "mean"),
        }
    ).reset_index()
    out[s.WINDOW_END] = out[s.WINDOW_START] + SECOND_MS
    return out.astype({c: np.int64 for c in out.columns if c not in _NOT_INT})


def _tumbling_union(valid: pd.DataFrame) -> pd.DataFrame:
    """One output per location-second of the valid inputs of both kinds: the flows'
    sum (NaN when the second has no flow), the speeds' mean, the lanes of either kind."""
    frame = valid.assign(
        **{
            s.WINDOW_START: valid[s.OBSERVATION_TS] // SECOND_MS * SECOND_MS,
            s.INPUT_TS_LATEST: valid[TIMESTAMP],
            s.INPUT_TS_EARLIEST: valid[TIMESTAMP],
        }
    )
    grouped = frame.groupby([s.LOCATION_ID, s.WINDOW_START], observed=True, sort=False)
    out = grouped.agg(
        **{
            s.INPUT_TS_LATEST: (s.INPUT_TS_LATEST, "max"),
            s.INPUT_TS_EARLIEST: (s.INPUT_TS_EARLIEST, "min"),
            s.INPUT_COUNT: (TIMESTAMP, "size"),
            s.LANES_SEEN: (s.LANE, "nunique"),
            s.NUM_LANES: (s.NUM_LANES, "max"),
            s.FLOW_SUM: (s.FLOW, "sum"),
            "_flows": (s.FLOW, "count"),
            s.SPEED_AVG: (s.SPEED, "mean"),
        }
    ).reset_index()
    out[s.FLOW_SUM] = out[s.FLOW_SUM].where(out.pop("_flows") > 0)
    out[s.WINDOW_END] = out[s.WINDOW_START] + SECOND_MS
    return out.astype({c: np.int64 for c in out.columns if c not in _NOT_INT})


_NOT_INT = (s.LOCATION_ID, s.FLOW_SUM, s.SPEED_AVG, *s.KINDS)
CHANGES = {
    s.FLOW_SUM: (s.FLOW_CHANGE_SHORT, s.FLOW_CHANGE_LONG),
    s.SPEED_AVG: (s.SPEED_CHANGE_SHORT, s.SPEED_CHANGE_LONG),
}
"""Per sliding value, its relative changes against the short and the long lookback."""


def _sliding(tumbling: pd.DataFrame, window_s: int, lookbacks_s: tuple[int, int]) -> pd.DataFrame:
    """One output per tumbling result (location, second t), over the present
    seconds of [t + 1 s − L, t + 1 s); the values of second t, and their relative
    change against seconds t − short and t − long ((now − then) / then; NaN when
    that second has no result or its value is 0)."""
    cols = [s.LOCATION_ID, s.WINDOW_START, s.INPUT_TS_LATEST, s.INPUT_TS_EARLIEST, s.INPUT_COUNT]
    # a tumbling second u lies in the windows whose last second is u, u + 1 s, …
    shifted = pd.concat(
        [
            tumbling[cols].assign(**{s.WINDOW_START: tumbling[s.WINDOW_START] + k * SECOND_MS})
            for k in range(window_s)
        ],
        ignore_index=True,
    )
    agg = (
        shifted.groupby([s.LOCATION_ID, s.WINDOW_START], observed=True, sort=False)
        .agg(
            **{
                s.INPUT_TS_LATEST: (s.INPUT_TS_LATEST, "max"),
                s.INPUT_TS_EARLIEST: (s.INPUT_TS_EARLIEST, "min"),
                s.INPUT_COUNT: (s.INPUT_COUNT, "sum"),
            }
        )
        .reset_index()
    )
    key = [s.LOCATION_ID, s.WINDOW_START]
    values = [*key, *CHANGES]
    last = tumbling[[*values, s.LANES_SEEN, s.NUM_LANES]]
    out = last.merge(agg, on=key, how="inner")
    for back_s, which in zip(lookbacks_s, (0, 1), strict=True):
        then = tumbling[values].assign(
            **{s.WINDOW_START: tumbling[s.WINDOW_START] + back_s * SECOND_MS}
        )
        then = out[key].merge(then, on=key, how="left")
        for value, changes in CHANGES.items():
            now, before = out[value].to_numpy(float), then[value].to_numpy(float)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[changes[which]] = np.where(before != 0, (now - before) / before, np.nan)
    last_second = out[s.WINDOW_START]
    out[s.WINDOW_END] = last_second + SECOND_MS
    out[s.WINDOW_START] = last_second + SECOND_MS - window_s * SECOND_MS
    floats = (*_NOT_INT, *(c for pair in CHANGES.values() for c in pair))
    return out.astype({c: np.int64 for c in out.columns if c not in floats})
