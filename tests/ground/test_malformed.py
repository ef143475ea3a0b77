"""The one definition of a valid input and the kinds of malformed ones: no Kafka, no Spark."""

import json

import pytest

from ground import contract as s
from ground import malformed as m
from publisher.codec import encode

GOOD = {
    s.OBSERVATION_TS: 1_763_867_400_000,
    s.SCHEDULED_TS: 1_763_867_400_012,
    s.SEQ: 17,
    s.ACCURACY: 95.0,
    s.SPEED: 87.3,
    s.LOCATION_ID: "RWS01_MONIBAS_0021hrl0414ra",
    s.LANE: 2,
    s.LATITUDE: 52.123456,
    s.LONGITUDE: 5.123456,
    s.NUM_LANES: 3,
}


def value(**changes) -> bytes:
    """GOOD with ``changes`` (None as a value drops the field), as compact JSON."""
    fields = {**GOOD, **changes}
    return json.dumps({k: v for k, v in fields.items() if v is not None}).encode()


def test_a_valid_message_is_no_kind_in_either_encoding():
    assert m.classify(encode(GOOD)) is None
    assert m.classify(value()) is None
    assert m.validate_input(GOOD) == []


def test_a_float_field_may_be_a_json_integer_as_schema_readers_read_it():
    assert m.classify(value(**{s.LATITUDE: 52, s.SPEED: 80, s.ACCURACY: 100})) is None


def test_a_null_measurement_beside_the_other_is_absent_as_for_spark():
    assert m.classify(encode({**GOOD, s.FLOW: 12}).replace(b"87.3", b"null")) is None


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"", m.EMPTY_VALUE),
        (None, m.EMPTY_VALUE),
        (b"speed=87.3", m.NOT_JSON),
        (b"[1, 2]", m.NOT_JSON),
        (b"{not json}", m.NOT_JSON),
        (b'{"lane": 2, "lane"', m.TRUNCATED),
        (b" " * (m.MAX_INPUT_BYTES + 1), m.OVERSIZED),
        (value(**{s.LOCATION_ID: "x" * m.MAX_INPUT_BYTES}), m.OVERSIZED),
        (encode(GOOD).replace(b"RWS01", b"Stra\xdfe"), m.NON_UTF8),
        (value(**{s.LANE: None}), m.MISSING_FIELD),
        (value(**{s.SPEED: None}), m.MISSING_FIELD),
        (value(**{s.SEQ: None}), m.MISSING_FIELD),
        (value(**{s.LANE: "2"}), m.WRONG_TYPE),
        (value(**{s.LANE: 2.0}), m.WRONG_TYPE),
        (value(**{s.NUM_LANES: True}), m.WRONG_TYPE),
        (value(**{s.LOCATION_ID: 42}), m.WRONG_TYPE),
        (value(**{s.SPEED: "87.3"}), m.WRONG_TYPE),
        (value(**{"firmware": "2.4"}), m.UNKNOWN_FIELD),
        (value(**{s.FLOW: 12}), m.UNKNOWN_FIELD),  # a speed message with a flow too
        (value(**{s.LOCATION_ID: ""}), m.EMPTY_VALUE),
        (encode(GOOD).replace(b'"lane":2', b'"lane":null'), m.EMPTY_VALUE),
        (encode(GOOD).replace(b'"speed":87.3', b'"speed":null'), m.EMPTY_VALUE),
        (value(**{s.SPEED: 1e308}), m.OUT_OF_RANGE),
        (value(**{s.SPEED: None, s.FLOW: -1}), m.OUT_OF_RANGE),
        (value(**{s.LANE: 0}), m.OUT_OF_RANGE),
        (value(**{s.LATITUDE: -90.5}), m.OUT_OF_RANGE),
        (value(**{s.OBSERVATION_TS: 2**63 - 1}), m.OUT_OF_RANGE),
        (encode(GOOD).replace(b"87.3", b"NaN"), m.OUT_OF_RANGE),
        (encode(GOOD).replace(b"87.3", b"1e400"), m.OUT_OF_RANGE),  # infinity
    ],
)
def test_classify_names_what_is_wrong(raw, kind):
    assert m.classify(raw) == kind


def test_every_cut_of_a_value_is_truncated():
    full = encode(GOOD)
    kinds = {m.classify(full[:n]) for n in range(1, len(full))}
    assert kinds == {m.TRUNCATED}
    for cut in (b'{"lane":nu', b'{"lane":-', b'{"speed":1e-', b'{"speed":Infin'):
        assert m.classify(cut) == m.TRUNCATED, cut


def test_validate_input_names_each_problem():
    problems = m.validate_input({**GOOD, s.LANE: "1", s.SPEED: -3.0, "extra": 1})
    assert any(p.startswith(f"{s.LANE}: expected int") for p in problems)
    assert any(p.startswith(f"{s.SPEED}: -3.0 outside 0..500") for p in problems)
    assert any("unknown fields: ['extra']" in p for p in problems)
    assert [kind for kind, _ in m.problems({**GOOD, s.LANE: "1"})] == [m.WRONG_TYPE]


def test_ranges_hold_every_field_with_a_number_and_real_values_fit():
    numbers = {name for name, kind in m.TYPES.items() if kind is not str}
    assert set(m.RANGES) == numbers
    for name, (low, high) in m.RANGES.items():
        assert low <= GOOD.get(name, low) <= high
    assert len(encode(GOOD)) < m.MAX_INPUT_BYTES


def test_every_message_field_has_one_type_and_inputs_check_it():
    names = {v for k, v in vars(s).items() if k.isupper() and isinstance(v, str)}
    fields = names - {s.STRING, s.INT32, s.INT64, s.FLOAT64, s.RECORD}
    assert set(s.FIELD_TYPES) == fields
    assert set(s.FIELD_TYPES.values()) == {s.STRING, s.INT32, s.INT64, s.FLOAT64}
    assert list(m.TYPES) == list(s.INPUT_FIELDS)
