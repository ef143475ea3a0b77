"""Reading a whole topic into columns, fast and exactly.

The evaluator reads every partition of a topic between fixed offsets
(:mod:`evaluator.topics.consume`), and parses the JSON values of each batch in bulk by
pyarrow (values joined with newlines, read with an explicit schema), which is
what keeps evaluation close to the cost of a bare consume. A batch pyarrow
cannot parse (a malformed value) is parsed record by record instead, so one bad
record costs only its batch's speed and is reported, never silently dropped.
"""

import io
import json
import logging
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json

from evaluator.topics.consume import Batch, iter_batches
from ground.errors import EvaluationError

log = logging.getLogger(__name__)

# columns the reader adds next to the parsed value fields
PARTITION = "_partition"
OFFSET = "_offset"
TIMESTAMP = "_timestamp"
TIMESTAMP_TYPE = "_timestamp_type"
MALFORMED = "_malformed"
KIND = "_kind"
TOPIC = "_topic"

LOG_APPEND_TIME = 2
"""confluent-kafka's code for LogAppendTime (CreateTime is 1)."""

LineParser = Callable[[bytes | None, pa.Schema], dict | None]
"""Parses one value the slow way; None marks it malformed."""
Classifier = Callable[[list, pa.Table, np.ndarray], np.ndarray]
"""Kind codes (int8, -1: valid) of a parsed batch's values, from the values, their
table and the parse's malformed mask."""


def parse_values(
    values: list, schema: pa.Schema, line_parser: LineParser, unexpected_fields: str = "ignore"
) -> tuple[pa.Table, np.ndarray]:
    """Parse JSON values into a table of ``schema``; second: the malformed mask."""
    n = len(values)
    if n == 0:
        return schema.empty_table(), np.zeros(0, bool)
    if all(v for v in values):
        data = b"\n".join(values)
        if data.count(b"\n") == n - 1:
            try:
                table = pa_json.read_json(
                    io.BytesIO(data),
                    read_options=pa_json.ReadOptions(block_size=max(len(data) // 4, 1 << 20) + 1),
                    parse_options=pa_json.ParseOptions(
                        explicit_schema=schema, unexpected_field_behavior=unexpected_fields
                    ),
                )
                if table.num_rows == n:
                    return table.select(schema.names).cast(schema), np.zeros(n, bool)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                pass
    log.info("batch of %d values not parseable in bulk: parsing record by record", n)
    rows = [line_parser(v, schema) for v in values]
    malformed = np.array([r is None for r in rows], bool)
    return pa.Table.from_pylist([r or {} for r in rows], schema=schema), malformed


def strict_line_parser(value: bytes | None, schema: pa.Schema) -> dict | None:
    """One JSON object whose fields fit the schema's types; None if it does not."""
    try:
        obj = json.loads(value) if value else None
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    return _typed(obj, schema)


SCALAR_FIELD = r'"{}"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*"|null)'
"""Regular expression of one scalar field, its name to be filled in (``format``); group 1
is its JSON value: how an ingest output's fields are recovered."""


def lenient_line_parser(value: bytes | None, schema: pa.Schema) -> dict | None:
    """Like :func:`strict_line_parser`, but recovers the schema's scalar fields from
    a value that is not valid JSON as a whole.

    Needed for the ingest stage: it embeds the input value unchanged, so a
    malformed input makes its output invalid JSON although the output's own
    fields (identity, input timestamps) are intact and must be measured.
    """
    parsed = strict_line_parser(value, schema)
    if parsed is not None or not value:
        return parsed
    text = value.decode("utf-8", "replace")
    obj = {}
    for name in schema.names:
        found = re.search(SCALAR_FIELD.format(re.escape(name)), text)
        if found is None:
            return None
        obj[name] = json.loads(found.group(1))
    return _typed(obj, schema)


def _typed(obj: dict, schema: pa.Schema) -> dict | None:
    row: dict[str, Any] = {}
    for f in schema:
        value = obj.get(f.name)
        if value is None:
            row[f.name] = None
        elif pa.types.is_integer(f.type):
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            row[f.name] = value
        elif pa.types.is_floating(f.type):
            if not isinstance(value, int | float) or isinstance(value, bool):
                return None
            row[f.name] = float(value)
        elif pa.types.is_string(f.type) or pa.types.is_dictionary(f.type):
            if not isinstance(value, str):
                return None
            row[f.name] = value
        else:
            row[f.name] = value
    return row


def read_topic(
    bootstrap: str,
    topic: str,
    schema: pa.Schema | None,
    line_parser: LineParser = strict_line_parser,
    batch_size: int = 50_000,
    idle_timeout_s: float = 30.0,
    unexpected_fields: str = "ignore",
    required_only: tuple[str, ...] = (),
    classify: Classifier | None = None,
    from_ms: int | None = None,
) -> pd.DataFrame:
    """The whole topic (or its records stamped from ``from_ms`` on) as a DataFrame:
    reader columns plus the parsed ``schema`` fields.

    ``required_only`` names schema fields that are checked, not kept: a record
    without one is malformed, and the column is dropped (saves memory on inputs
    whose every field must be present but only a few are used). ``classify`` sees
    each parsed batch while it still has its values and every column: its codes
    become the column :data:`KIND`, and a record it classifies is malformed.

    ``schema`` None reads broker metadata only (no value parsing);
    ``unexpected_fields`` "error" makes a value with a field outside ``schema``
    malformed (pyarrow's ``unexpected_field_behavior``). String fields come back
    as categoricals, integer fields with nulls as pandas ``Int64``. Columns are
    preallocated for the whole topic and filled batch by batch, so the topic is
    held once, never once as Arrow and again as pandas.
    """
    columns: _Columns | None = None
    pending: Future | None = None
    # pyarrow parses without the GIL: parsing batch k overlaps consuming batch k+1;
    # one batch in flight at most, so unparsed values never pile up in memory
    with ThreadPoolExecutor(max_workers=1) as pool:
        for batch in iter_batches(bootstrap, topic, batch_size, idle_timeout_s, from_ms):
            if columns is None:
                columns = _Columns(batch.total, schema, required_only, classify is not None)
            start = columns.add_meta(batch)
            if schema is not None:
                if pending is not None:
                    columns.add_fields(*pending.result())
                    # pyarrow's allocator keeps freed parse buffers: hand them back
                    pa.default_memory_pool().release_unused()
                args = (batch.values, schema, line_parser, unexpected_fields, classify)
                pending = pool.submit(_parse_at, start, *args)
            del batch
        if pending is not None and columns is not None:
            columns.add_fields(*pending.result())
    pa.default_memory_pool().release_unused()
    frame = (columns or _Columns(0, schema, required_only, classify is not None)).frame()
    frame[TOPIC] = pd.Categorical.from_codes(np.zeros(len(frame), np.int8), [topic])
    return frame


def _parse_at(
    start: int,
    values: list,
    schema: pa.Schema,
    line_parser: LineParser,
    unexpected_fields: str,
    classify: Classifier | None,
) -> tuple[int, pa.Table, np.ndarray, np.ndarray | None]:
    table, malformed = parse_values(values, schema, line_parser, unexpected_fields)
    return start, table, malformed, None if classify is None else classify(values, table, malformed)


class _Columns:
    """Preallocated numpy columns of one topic, filled batch by batch."""

    def __init__(
        self,
        capacity: int,
        schema: pa.Schema | None,
        required_only: tuple[str, ...] = (),
        classified: bool = False,
    ):
        self.n = 0
        self.required_only = required_only
        self.meta: dict[str, np.ndarray] = {
            PARTITION: np.empty(capacity, np.int32),
            OFFSET: np.empty(capacity, np.int64),
            TIMESTAMP: np.empty(capacity, np.int64),
            TIMESTAMP_TYPE: np.empty(capacity, np.int8),
        }
        self.values: dict[str, np.ndarray] = {}
        self.nulls: dict[str, np.ndarray] = {}
        self.categories: dict[str, dict[str, int]] = {}
        if schema is not None:
            self.meta[MALFORMED] = np.zeros(capacity, bool)
            if classified:
                self.meta[KIND] = np.full(capacity, -1, np.int8)
            for f in schema:
                if f.name in required_only:
                    continue
                if pa.types.is_string(f.type):
                    self.values[f.name] = np.full(capacity, -1, np.int32)
                    self.categories[f.name] = {}
                elif pa.types.is_floating(f.type):
                    self.values[f.name] = np.empty(capacity, np.float64)
                else:
                    self.values[f.name] = np.empty(capacity, np.int64)

    def add_meta(self, batch: Batch) -> int:
        """Store a batch's broker columns; the row where it starts."""
        start, end = self.n, self.n + len(batch.offset)
        self.meta[PARTITION][start:end] = batch.partition
        self.meta[OFFSET][start:end] = batch.offset
        self.meta[TIMESTAMP][start:end] = batch.timestamp
        self.meta[TIMESTAMP_TYPE][start:end] = batch.timestamp_type
        self.n = end
        return start

    def add_fields(
        self, start: int, table: pa.Table, malformed: np.ndarray, kinds: np.ndarray | None
    ) -> None:
        end = start + table.num_rows
        for name in self.required_only:
            malformed = malformed | table.column(name).is_null().to_numpy(zero_copy_only=False)
        if kinds is not None:
            self.meta[KIND][start:end] = kinds
            malformed = malformed | (kinds >= 0)
        self.meta[MALFORMED][start:end] = malformed
        for name, target in self.values.items():
            col = table.column(name).combine_chunks()
            if name in self.categories:
                encoded = col.dictionary_encode()
                lookup = self.categories[name]
                codes = np.array(
                    [lookup.setdefault(v, len(lookup)) for v in encoded.dictionary.to_pylist()],
                    np.int32,
                )
                indices = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
                target[start:end] = np.where(indices >= 0, codes[np.maximum(indices, 0)], -1)
                continue
            if col.null_count and not pa.types.is_floating(col.type):
                mask = self.nulls.setdefault(name, np.zeros(len(target), bool))
                mask[start:end] = col.is_null().to_numpy(zero_copy_only=False)
                col = col.fill_null(0)
            target[start:end] = col.to_numpy(zero_copy_only=False)

    def frame(self) -> pd.DataFrame:
        n = self.n
        data: dict[str, object] = {k: v[:n] for k, v in self.meta.items()}
        for name, values in self.values.items():
            if name in self.categories:
                cats = list(self.categories[name])
                data[name] = pd.Categorical.from_codes(values[:n], cats)
            elif name in self.nulls:
                data[name] = pd.arrays.IntegerArray(values[:n], self.nulls[name][:n])
            else:
                data[name] = values[:n]
        return pd.DataFrame(data, copy=False)


def check_log_append_time(topic: str, types: np.ndarray) -> None:
    """EvaluationError unless every record of ``types`` (confluent-kafka codes) is LogAppendTime."""
    bad = int((np.asarray(types) != LOG_APPEND_TIME).sum())
    if bad:
        raise not_log_append_time(topic, bad, len(types))


def not_log_append_time(topic: str, bad: int, total: int) -> EvaluationError:
    """The error for ``bad`` of ``total`` records of ``topic`` not stamped by the broker."""
    return EvaluationError(
        f"topic {topic!r}: {bad} of {total} records are not stamped with "
        "LogAppendTime; latencies would mix clocks (create benchmark topics with "
        "message.timestamp.type=LogAppendTime)"
    )
