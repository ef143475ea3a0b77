"""Encoded values: schema-valid, floats stay floats, sizes within the contract."""

import json

import pytest

from ground import contract as schema
from ground.malformed import validate_input
from publisher.codec import LaneEncoder, check, decode, encode
from publisher.model import make_locations

OBS_TS = 1_763_867_400_000
SCHED_TS = 1_763_867_400_123


@pytest.fixture
def encoder():
    return LaneEncoder("RWS01_MONIBAS_0021hrl0414ra", 2, 52.0, 5.123456, 3)


def test_speed_value_carries_every_field(encoder):
    message = decode(encoder.speed(OBS_TS, SCHED_TS, 17, 100.0, 87.25))
    assert validate_input(message) == []
    assert message == {
        schema.LOCATION_ID: "RWS01_MONIBAS_0021hrl0414ra",
        schema.LANE: 2,
        schema.OBSERVATION_TS: OBS_TS,
        schema.SCHEDULED_TS: SCHED_TS,
        schema.SEQ: 17,
        schema.ACCURACY: 100.0,
        schema.SPEED: 87.2,
        schema.LATITUDE: 52.0,
        schema.LONGITUDE: 5.123456,
        schema.NUM_LANES: 3,
    }


def test_floats_are_written_as_floats(encoder):
    text = encoder.flow(OBS_TS, SCHED_TS, 0, 95.0, 12).decode()
    assert '"latitude":52.000000' in text
    assert '"accuracy":95.0' in text
    message = json.loads(text)
    assert isinstance(message[schema.LATITUDE], float)
    assert isinstance(message[schema.FLOW], int)
    assert schema.SPEED not in message


def test_fast_encoder_matches_generic_encoder(encoder):
    fast = encoder.speed(OBS_TS, SCHED_TS, 5, 98.0, 101.5)
    assert encode(decode(fast)) == fast
    fast = encoder.flow(OBS_TS, SCHED_TS, 5, 98.0, 31)
    assert encode(decode(fast)) == fast


def test_generic_encoder_rejects_unknown_fields():
    with pytest.raises(ValueError, match="outside the schema"):
        encode({schema.LANE: 1, "colour": "red"})


@pytest.mark.parametrize("seq", [0, 9, 123_456, 999_999_999])
def test_sizes_stay_in_range_for_every_location_shape(seq):
    for loc in make_locations(300, seed=1):
        enc = LaneEncoder(loc.location_id, loc.num_lanes, loc.latitude, loc.longitude, 5)
        for value in (
            enc.speed(OBS_TS, SCHED_TS, seq, 100.0, 149.9),
            enc.speed(OBS_TS, SCHED_TS, seq, 80.0, 5.0),
            enc.flow(OBS_TS, SCHED_TS, seq, 100.0, 45),
            enc.flow(OBS_TS, SCHED_TS, seq, 80.0, 1),
        ):
            assert check(value) == []


def test_check_reports_size_and_schema_problems():
    tiny = b'{"lane": 1}'
    problems = check(tiny)
    assert any("bytes" in p for p in problems)
    assert any(schema.LOCATION_ID in p for p in problems)
