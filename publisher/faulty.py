"""The faulty-event workload's malformed inputs (docs/method.md#workloads).

:func:`malformed` turns a valid input message into one malformed value of a
given kind of :data:`ground.malformed.KINDS`, each with exactly the one defect
its kind names, so :func:`ground.malformed.classify` gives that kind back.
:class:`FaultySource` mixes them into any source's stream as *extra* records:
the valid stream is exactly what the source publishes without them (same
pairs, same schedule), so the outputs the evaluator expects do not change.

Each malformed value is derived from the valid message just sent (same
location, lane and observation time): a pipeline that let one through would
write a duplicate or a wrong output that the evaluator sees, not one that
vanishes for want of a twin.
"""

import json
from collections.abc import Mapping
from typing import Any, Final

from ground import contract as schema
from ground import malformed as m
from publisher.codec import encode
from publisher.source import Produce, Source

OVERSIZED_BYTES: Final = 1024 * 1024
"""The oversized value: 1 MiB, just above Kafka's default record limit (1 MB)."""
UNKNOWN_FIELD: Final = "sensor_firmware"
_MISSING = (*schema.REQUIRED_FIELDS, schema.SPEED)
"""Fields the missing_field values drop in turn (speed: the measurement, either kind)."""
_EMPTY = (schema.LOCATION_ID, schema.LANE, schema.OBSERVATION_TS, schema.SEQ)
_WRONG_TYPES: Final[tuple[tuple[str, Any], ...]] = (
    (schema.LANE, "2"),
    (schema.OBSERVATION_TS, 1.5),
    (schema.NUM_LANES, True),
    (schema.LOCATION_ID, 42),
    (schema.LATITUDE, "52.1"),
    (schema.SEQ, [1]),
)
_OUT_OF_RANGE: Final[tuple[tuple[str, Any], ...]] = (
    (schema.SPEED, 1e308),
    (schema.FLOW, -12),
    (schema.LANE, 1_000_000),
    (schema.LATITUDE, 95.0),
    (schema.OBSERVATION_TS, 9_000_000_000_000_000_000),
)
"""Out-of-range values; a measurement replaces the message's own one (speed or flow)."""


def malformed(kind: str, variant: int, message: Mapping[str, Any]) -> bytes:
    """A value of ``kind`` made from the valid ``message``; ``variant`` picks which field
    (or which cut) when the kind has several, in turn."""
    valid = encode(message)
    if kind == m.NOT_JSON:
        return f"{message[schema.LOCATION_ID]} lane {message[schema.LANE]}: no data".encode()
    if kind == m.TRUNCATED:
        return valid[: 1 + variant * 37 % (len(valid) - 1)]
    if kind == m.NON_UTF8:  # a Latin-1 location id: "ß" is one byte, not UTF-8's two
        return valid.replace(b'"' + message[schema.LOCATION_ID].encode(), b'"Stra\xdfe_', 1)
    if kind == m.OVERSIZED:  # otherwise valid: its location id fills it up
        pad = OVERSIZED_BYTES - len(encode({**message, schema.LOCATION_ID: ""}))
        return encode({**message, schema.LOCATION_ID: "x" * pad})
    fields = dict(message)
    if kind == m.MISSING_FIELD:
        name = _MISSING[variant % len(_MISSING)]
        for dropped in schema.KINDS if name == schema.SPEED else (name,):
            fields.pop(dropped, None)
    elif kind == m.EMPTY_VALUE:
        name = _EMPTY[variant % len(_EMPTY)]
        fields[name] = "" if name == schema.LOCATION_ID else None
    elif kind == m.WRONG_TYPE:
        name, value = _WRONG_TYPES[variant % len(_WRONG_TYPES)]
        fields[name] = value
    elif kind == m.OUT_OF_RANGE:
        name, value = _OUT_OF_RANGE[variant % len(_OUT_OF_RANGE)]
        if name in schema.KINDS:
            for measurement in schema.KINDS:
                fields.pop(measurement, None)
        fields[name] = value
    elif kind == m.UNKNOWN_FIELD:
        fields[UNKNOWN_FIELD] = "2.4.1"
    else:
        raise ValueError(f"unknown kind of malformed input {kind!r} (kinds: {m.KINDS})")
    return json.dumps(fields, separators=(",", ":")).encode()


class FaultySource:
    """``inner``'s stream with malformed values mixed in, ``fraction`` of all records.

    After each send of ``inner`` as many malformed values follow as keep their share
    of everything published at ``fraction`` (rounded down), each derived from one of
    the messages just sent and published to its topic with its key; their kinds
    cycle through :data:`ground.malformed.KINDS`. ``sent`` counts them per kind.
    """

    def __init__(self, inner: Source, fraction: float) -> None:
        self.inner = inner
        self.fraction = fraction
        self.sent: dict[str, int] = dict.fromkeys(m.KINDS, 0)
        self._valid = 0
        self._malformed = 0

    def offsets(self, tick: int) -> list[float] | None:
        return self.inner.offsets(tick)

    def send(
        self, produce: Produce, tick: int, index: int, observation_ts: int, scheduled_ts: int
    ) -> int:
        just_sent: list[tuple[str, bytes, bytes]] = []

        def keep(topic: str, value: bytes, key: bytes) -> None:
            produce(topic, value, key)
            just_sent.append((topic, value, key))

        self._valid += self.inner.send(keep, tick, index, observation_ts, scheduled_ts)
        due = due_malformed(self._valid, self.fraction)
        before = self._malformed
        while self._malformed < due:
            n = self._malformed
            kind = m.KINDS[n % len(m.KINDS)]
            topic, value, key = just_sent[n % len(just_sent)]
            produce(topic, malformed(kind, n // len(m.KINDS), json.loads(value)), key)
            self.sent[kind] += 1
            self._malformed += 1
        return len(just_sent) + self._malformed - before


def due_malformed(valid: int, fraction: float) -> int:
    """Malformed records due after ``valid`` valid ones: ``fraction`` of all records."""
    return int(valid * fraction / (1 - fraction) + 1e-9)
