import json

import pyarrow as pa

from evaluator.outputs.expected import input_line_parser
from evaluator.topics.output_fields import INPUT_SCHEMA, output_schema
from evaluator.topics.reader import lenient_line_parser, parse_values, strict_line_parser
from ground import contract as s

SCHEMA = output_schema("ingest")


def _out(offset: int, record: str) -> bytes:
    head = {s.RUN_ID: "r", s.INPUT_TS_LATEST: 10 + offset, s.INPUT_TS_EARLIEST: 10 + offset,
            s.INPUT_COUNT: 1, s.SOURCE_TOPIC: "speed", s.SOURCE_PARTITION: 0,
            s.SOURCE_OFFSET: offset}  # fmt: skip
    return (json.dumps(head)[:-1] + f', "{s.RECORD}": {record}}}').encode()


def test_bulk_parse_keeps_order_and_ignores_other_fields():
    values = [_out(i, '{"a": 1}') for i in range(5)]
    table, malformed = parse_values(values, SCHEMA, strict_line_parser)
    assert table.column(s.SOURCE_OFFSET).to_pylist() == [0, 1, 2, 3, 4]
    assert table.column(s.INPUT_TS_LATEST).to_pylist() == [10, 11, 12, 13, 14]
    assert not malformed.any()


def test_malformed_embedded_record_is_recovered_for_ingest():
    values = [_out(0, '{"a": 1}'), _out(1, "{not json"), None]
    table, malformed = parse_values(values, SCHEMA, lenient_line_parser)
    assert malformed.tolist() == [False, False, True]
    assert table.column(s.SOURCE_OFFSET).to_pylist() == [0, 1, None]
    _, bad = parse_values(values, SCHEMA, strict_line_parser)
    assert bad.tolist() == [False, True, True]


def test_value_with_newline_falls_back_without_shifting_rows():
    values = [_out(0, '{"a":\n1}'), _out(1, "{}")]
    table, malformed = parse_values(values, SCHEMA, strict_line_parser)
    assert table.column(s.SOURCE_OFFSET).to_pylist() == [0, 1]
    assert not malformed.any()


def test_input_parser_applies_validate_input():
    good = {s.LOCATION_ID: "L", s.LANE: 1, s.OBSERVATION_TS: 1000, s.SPEED: 80.0,
            s.LATITUDE: 52.0, s.LONGITUDE: 5.0, s.NUM_LANES: 2, s.ACCURACY: 95.0, s.SEQ: 0,
            s.SCHEDULED_TS: 1000}  # fmt: skip
    assert input_line_parser(json.dumps(good).encode(), INPUT_SCHEMA)[s.SPEED] == 80.0
    both = {**good, s.FLOW: 3.0}
    wrong = {**good, s.LANE: "1"}
    extra = {**good, "extra": 1}
    for bad in (both, wrong, extra):
        assert input_line_parser(json.dumps(bad).encode(), INPUT_SCHEMA) is None
    table, malformed = parse_values(
        [json.dumps(v).encode() for v in (good, extra)], INPUT_SCHEMA, input_line_parser, "error"
    )
    assert malformed.tolist() == [False, True]
    assert table.num_rows == 2
    assert isinstance(table.schema, pa.Schema)
