"""Input messages as bytes: the compact JSON of :mod:`ground.contract`.

Two encoders give byte-for-byte the same output. :func:`encode` builds a value
from a mapping with :mod:`json` (replay, tests). :class:`LaneEncoder` is the
hot path of the publisher: the part of a value that never changes for a
location and lane (id, lane, coordinates, lane count) is formatted once, so
each message costs one ``%`` format and one ``encode``. Floats are always
written with a decimal point (``52.0``, never ``52``) so typed readers see a
double.
"""

import json
from collections.abc import Mapping
from typing import Any

from ground import contract as schema
from ground.contract import (
    ACCURACY,
    FLOW,
    LANE,
    LATITUDE,
    LOCATION_ID,
    LONGITUDE,
    NUM_LANES,
    OBSERVATION_TS,
    SCHEDULED_TS,
    SEQ,
    SPEED,
)
from ground.malformed import validate_input

# Field order of an encoded value: the varying fields first, then the static ones.
FIELD_ORDER = (
    OBSERVATION_TS,
    SCHEDULED_TS,
    SEQ,
    ACCURACY,
    SPEED,
    FLOW,
    LOCATION_ID,
    LANE,
    LATITUDE,
    LONGITUDE,
    NUM_LANES,
)
_FLOAT_DIGITS = {ACCURACY: 1, SPEED: 1, LATITUDE: 6, LONGITUDE: 6}


def _number(name: str, value: Any) -> str:
    if name in _FLOAT_DIGITS:
        return f"{float(value):.{_FLOAT_DIGITS[name]}f}"
    return json.dumps(value)


def encode(message: Mapping[str, Any]) -> bytes:
    """A value from a decoded message; fields outside the schema are an error."""
    extra = set(message) - set(FIELD_ORDER)
    if extra:
        raise ValueError(f"fields outside the schema: {sorted(extra)}")
    parts = [f'"{name}":{_number(name, message[name])}' for name in FIELD_ORDER if name in message]
    return ("{" + ",".join(parts) + "}").encode()


def decode(value: bytes | str) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(value)
    return message


class LaneEncoder:
    """Pre-formatted speed and flow values of one location's lane."""

    __slots__ = ("flow_template", "key", "speed_template")

    def __init__(
        self, location_id: str, lane: int, latitude: float, longitude: float, num_lanes: int
    ) -> None:
        static = ",".join(
            (
                f'"{LOCATION_ID}":{json.dumps(location_id)}',
                f'"{LANE}":{lane:d}',
                f'"{LATITUDE}":{latitude:.6f}',
                f'"{LONGITUDE}":{longitude:.6f}',
                f'"{NUM_LANES}":{num_lanes:d}',
            )
        ).replace("%", "%%")
        head = f'{{"{OBSERVATION_TS}":%d,"{SCHEDULED_TS}":%d,"{SEQ}":%d,"{ACCURACY}":%.1f,'
        self.speed_template = head + f'"{SPEED}":%.1f,' + static + "}"
        self.flow_template = head + f'"{FLOW}":%d,' + static + "}"
        self.key = location_id.encode()

    def speed(
        self, observation_ts: int, scheduled_ts: int, seq: int, accuracy: float, speed: float
    ) -> bytes:
        return (self.speed_template % (observation_ts, scheduled_ts, seq, accuracy, speed)).encode()

    def flow(
        self, observation_ts: int, scheduled_ts: int, seq: int, accuracy: float, flow: int
    ) -> bytes:
        return (self.flow_template % (observation_ts, scheduled_ts, seq, accuracy, flow)).encode()


def check(value: bytes) -> list[str]:
    """Problems of one encoded value: schema violations and size outside the contract."""
    problems = validate_input(decode(value))
    if not schema.MIN_VALUE_BYTES <= len(value) <= schema.MAX_VALUE_BYTES:
        problems.append(
            f"value is {len(value)} bytes, outside "
            f"{schema.MIN_VALUE_BYTES}..{schema.MAX_VALUE_BYTES}"
        )
    return problems
