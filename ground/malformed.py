"""What a valid input message is, and what kind of malformed one is not (docs/method.md#data).

The one definition of a **valid input**, shared by the publisher (which
checks what it replays), the evaluator (which expects outputs from valid
inputs only: :func:`evaluator.outputs.expected.input_kinds`) and the faulty-event
workload (which publishes one malformed input of each
:data:`KINDS` in turn, :mod:`publisher.faulty`). A valid input is a UTF-8 JSON
object of at most :data:`MAX_INPUT_BYTES` with every field of
:data:`ground.contract.REQUIRED_FIELDS` and exactly one of speed and flow, no
other field, each of its JSON type (a float field may be written as a JSON
integer, as a reader with a schema accepts), none null or empty, and every
number within its field's :data:`RANGES`. The parse stage decides the same with
one Spark expression built from the same tables,
:func:`engines.spark.malformed.valid_input`.
"""

import json
import re
from typing import Any, Final

from ground.contract import (
    ACCURACY,
    FIELD_TYPES,
    FLOAT64,
    FLOW,
    INPUT_FIELDS,
    INT32,
    INT64,
    LANE,
    LATITUDE,
    LONGITUDE,
    NUM_LANES,
    OBSERVATION_TS,
    REQUIRED_FIELDS,
    SCHEDULED_TS,
    SEQ,
    SPEED,
    STRING,
)
from ground.contract import (
    KINDS as MEASUREMENTS,
)

NOT_JSON: Final = "not_json"
TRUNCATED: Final = "truncated"
MISSING_FIELD: Final = "missing_field"
WRONG_TYPE: Final = "wrong_type"
UNKNOWN_FIELD: Final = "unknown_field"
EMPTY_VALUE: Final = "empty_value"
OVERSIZED: Final = "oversized"
NON_UTF8: Final = "non_utf8"
OUT_OF_RANGE: Final = "out_of_range"
KINDS: Final = (
    NOT_JSON,
    TRUNCATED,
    MISSING_FIELD,
    WRONG_TYPE,
    UNKNOWN_FIELD,
    EMPTY_VALUE,
    OVERSIZED,
    NON_UTF8,
    OUT_OF_RANGE,
)
"""Every kind of malformed input, in the order the faulty-event workload cycles through."""

MAX_INPUT_BYTES: Final = 4096
"""A value is ~200 bytes (ground.contract); one twenty times that is no observation."""
LATEST_TS_MS: Final = 4_102_444_800_000
"""2100-01-01: later epoch milliseconds are no time of publication (and would overflow
Spark's microsecond timestamps long before the long does)."""

_LITERALS: Final = ("null", "true", "false", "NaN", "Infinity", "-Infinity")

RANGES: Final[dict[str, tuple[float, float]]] = {
    LANE: (1, 100),
    NUM_LANES: (1, 100),
    OBSERVATION_TS: (0, LATEST_TS_MS),
    SCHEDULED_TS: (0, LATEST_TS_MS),
    SEQ: (0, 2**63 - 1),
    SPEED: (0.0, 500.0),
    FLOW: (0.0, 1000.0),
    LATITUDE: (-90.0, 90.0),
    LONGITUDE: (-180.0, 180.0),
    ACCURACY: (0.0, 100.0),
}
"""Inclusive bounds of every number: speed in km/h, flow in vehicles per lane and minute
(real ones stay far inside; NaN and infinities are outside)."""

_JSON_TYPES: Final[dict[str, type]] = {STRING: str, INT32: int, INT64: int, FLOAT64: float}

TYPES: Final[dict[str, type]] = {name: _JSON_TYPES[FIELD_TYPES[name]] for name in INPUT_FIELDS}
"""JSON type of each input field (float: a JSON number, int: a JSON number without fraction)."""


def _has_type(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _field(name: str, value: Any) -> tuple[str, str] | None:
    """The problem of one present field, as (kind, text); None when it is valid."""
    if value is None or value == "":
        return EMPTY_VALUE, f"{name}: empty ({json.dumps(value)})"
    kind = TYPES[name]
    if not _has_type(value, kind):
        return WRONG_TYPE, f"{name}: expected {kind.__name__}, got {value!r}"
    if name in RANGES:
        low, high = RANGES[name]
        if not low <= value <= high:  # also NaN
            return OUT_OF_RANGE, f"{name}: {value!r} outside {low:g}..{high:g}"
    return None


def problems(message: dict) -> list[tuple[str, str]]:
    """(kind, text) of every problem of one decoded input message (empty: valid)."""
    found = []
    for name in REQUIRED_FIELDS:
        if name not in message:
            found.append((MISSING_FIELD, f"{name}: missing"))
        elif (problem := _field(name, message[name])) is not None:
            found.append(problem)
    # a null measurement is an absent one, as for a reader with a schema (Spark's from_json)
    measured = [k for k in MEASUREMENTS if message.get(k) is not None]
    if not measured:
        kind = EMPTY_VALUE if any(k in message for k in MEASUREMENTS) else MISSING_FIELD
        found.append((kind, f"neither {SPEED!r} nor {FLOW!r}: exactly one expected"))
    elif len(measured) == 2:
        found.append((UNKNOWN_FIELD, f"both {SPEED!r} and {FLOW!r}: exactly one expected"))
    elif (problem := _field(measured[0], message[measured[0]])) is not None:
        found.append(problem)
    extra = sorted(set(message) - set(INPUT_FIELDS))
    if extra:
        found.append((UNKNOWN_FIELD, f"unknown fields: {extra}"))
    return found


def validate_input(message: dict) -> list[str]:
    """Problems of one decoded input message against the contract (empty: valid)."""
    return [text for _, text in problems(message)]


def classify(value: bytes | None) -> str | None:
    """The kind of malformed input ``value`` is (one of :data:`KINDS`); None when valid.

    A value with several defects is the first that applies of: empty (no value at
    all), oversized, non_utf8, truncated or not_json, then the first problem of
    :func:`problems` (fields in the contract's order).
    """
    if not value:
        return EMPTY_VALUE
    if len(value) > MAX_INPUT_BYTES:
        return OVERSIZED
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return NON_UTF8
    try:
        # NaN and Infinity are read as numbers (Spark's JSON reader accepts them too)
        # and then fall outside every range
        message = json.loads(text)
    except json.JSONDecodeError as err:
        return TRUNCATED if _ends_early(text, err) else NOT_JSON
    if not isinstance(message, dict):
        return NOT_JSON
    found = problems(message)
    return found[0][0] if found else None


def _ends_early(text: str, err: json.JSONDecodeError) -> bool:
    """Whether ``text`` is an object cut short: it runs out where the parser wanted more.

    The parser reports an unterminated string where the string starts, a number cut
    after its sign, point or exponent or a cut literal where that token starts, and
    every other early end at the end of the text.
    """
    rest = text[err.pos :].rstrip()
    ran_out = (
        not rest
        or err.msg.startswith("Unterminated string")
        or re.fullmatch(r"[-+.eE]{1,2}", rest) is not None
        or any(literal.startswith(rest) for literal in _LITERALS)
    )
    return text.lstrip().startswith("{") and ran_out
