"""Malformed inputs as the evaluator reads them: the same kinds as ground.malformed, in bulk
and record by record (no Kafka)."""

import numpy as np
import pandas as pd
import pytest

from evaluator.outputs.expected import input_kinds, input_line_parser, malformed_by_kind, valid_mask
from evaluator.topics.output_fields import INPUT_SCHEMA
from evaluator.topics.reader import KIND, MALFORMED, parse_values
from ground import malformed as m
from publisher.codec import encode
from publisher.faulty import malformed
from tests.publisher.test_faulty import FLOW_MESSAGE, SPEED_MESSAGE


def _kinds(values: list) -> list[str | None]:
    table, bad = parse_values(values, INPUT_SCHEMA, input_line_parser, "error")
    codes = input_kinds(values, table, bad)
    return [None if c < 0 else m.KINDS[c] for c in codes]


def test_a_batch_with_every_kind_is_classified_value_by_value():
    values = [encode(SPEED_MESSAGE), encode(FLOW_MESSAGE)]
    values += [malformed(kind, v, SPEED_MESSAGE) for v in range(6) for kind in m.KINDS]
    assert _kinds(values) == [m.classify(v) for v in values]
    assert _kinds(values)[:2] == [None, None]


@pytest.mark.parametrize("kind", [m.OUT_OF_RANGE, m.OVERSIZED, m.EMPTY_VALUE, m.MISSING_FIELD])
def test_kinds_that_pyarrow_parses_in_bulk_are_found_all_the_same(kind):
    bad = [malformed(kind, v, SPEED_MESSAGE) for v in range(6)]
    bulk = [b for b in bad if not parse_values([b], INPUT_SCHEMA, input_line_parser, "error")[1][0]]
    assert bulk, "no variant of this kind is parsed in bulk"
    assert _kinds([encode(FLOW_MESSAGE), *bulk]) == [None, *(kind for _ in bulk)]


def test_counts_per_kind_list_every_kind_and_valid_mask_agrees():
    codes = np.array([-1, 0, 8, 8, -1, 3], np.int8)
    inputs = pd.DataFrame({KIND: codes, MALFORMED: codes >= 0})
    counts = malformed_by_kind(inputs)
    assert list(counts) == list(m.KINDS)
    assert counts[m.NOT_JSON] == 1 and counts[m.OUT_OF_RANGE] == 2 and counts[m.WRONG_TYPE] == 1
    assert sum(counts.values()) == 4


def test_valid_mask_leaves_out_every_classified_input():
    values = [encode(SPEED_MESSAGE), *(malformed(k, 0, FLOW_MESSAGE) for k in m.KINDS)]
    table, bad = parse_values(values, INPUT_SCHEMA, input_line_parser, "error")
    codes = input_kinds(values, table, bad)
    frame = table.to_pandas()
    frame[MALFORMED] = bad | (codes >= 0)
    assert valid_mask(frame).tolist() == [True] + [False] * len(m.KINDS)
