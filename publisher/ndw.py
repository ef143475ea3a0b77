"""The NDW export format for ``--from-file``: parsing and pairing, pure (lines in, messages out).

The papers' reference implementation replays real NDW measurements stored one
observation per line, a key and a JSON value::

    u/1/h/4/RWS01_MONIBAS_0021hrl0414ra/lane2= {"lat":51.48,"long":5.40,"flow":900,
      "period":60,"accuracy":100,"timestamp":"2017-03-15 14:41:00.0","num_lanes":2}

The key is a geohash path, the measurement location id and the lane; the value
has either ``speed`` (km/h) or ``flow`` (vehicles per hour, counted over
``period`` seconds). :func:`read_minutes` turns such lines into input messages
of :mod:`ground.contract`, one list per data minute, which
:mod:`publisher.replay` paces and publishes like any replayed minute
(docs/method.md#data):

- a data minute is a run of consecutive lines whose timestamps fall in one
  minute (exports are sorted by time; a minute that comes back later is
  published again as its own data minute, and reported);
- the speed and flow lines of one location, lane and minute are paired, twins
  adjacent, pairs in the order of their first line. An observation without its
  twin is **skipped** and reported: the publisher sends twins, as the
  synthetic workload does, so every stage sees the same observations and
  ``seq`` stays the contract's (per location and topic, gap-free, shared by
  twins). A second line of the same kind is skipped and reported too;
- ``flow`` becomes vehicles per minute (``flow / 60``), the contract's unit;
  ``speed``, coordinates and accuracy are kept;
- a line that cannot be read is skipped and reported with its line number.

:class:`Report` collects what was read, published and skipped, with examples.
"""

import functools
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ground import contract as schema
from ground.malformed import validate_input

EXAMPLES = 5
"""Examples (line number and reason) kept per kind of skipped line."""

_KEY = re.compile(r"(?:\S*/)?(?P<location>[^\s/]+)/lane(?P<lane>[0-9]+)")
_TIMESTAMP = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2}) (?P<hour>\d{2}):(?P<minute>\d{2}):\d{2}(?:\.\d+)?"
)
_SECONDS_PER_HOUR = 3600
_SECONDS_PER_MINUTE = 60


class LineError(ValueError):
    """Why one line cannot be read (the message is the reason, without the line number)."""


@dataclass(frozen=True)
class Observation:
    """One readable line: an input message of the contract and where it came from."""

    line: int
    minute_ms: int
    """Start of the line's data minute, epoch ms (the export's local time read as UTC;
    only its order and equality matter, the publisher rewrites it)."""
    kind: str
    """:data:`ground.contract.SPEED` or :data:`ground.contract.FLOW`."""
    message: dict[str, Any]

    @property
    def where(self) -> str:
        """The observation's place and minute, for reports."""
        minute = datetime.fromtimestamp(self.minute_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
        m = self.message
        return f"{m[schema.LOCATION_ID]} lane {m[schema.LANE]} at {minute}"


@dataclass
class Skipped:
    """Lines of one kind that were not published: how many, and the first few."""

    count: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, reason: str) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append((line, reason))

    def describe(self) -> str:
        shown = ", ".join(f"line {line} ({reason})" for line, reason in self.examples)
        return shown + (", …" if self.count > len(self.examples) else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "examples": [{"line": line, "reason": reason} for line, reason in self.examples],
        }


@dataclass
class Report:
    """What :func:`read_minutes` read from one file, so far."""

    name: str
    lines: int = 0
    """Non-blank lines."""
    observations: int = 0
    """Readable lines."""
    pairs: int = 0
    """Speed/flow pairs handed on for publishing (two messages each)."""
    minutes: int = 0
    """Data minutes handed on (a minute with no pair is none)."""
    minutes_out_of_order: int = 0
    """Runs of lines whose minute is not later than the previous run's."""
    unreadable: Skipped = field(default_factory=Skipped)
    unpaired: Skipped = field(default_factory=Skipped)
    repeated: Skipped = field(default_factory=Skipped)

    def warnings(self) -> list[str]:
        """One line per kind of trouble, for the user; empty when every line was published."""
        found = []
        if n := self.unreadable.count:
            found.append(
                f"{self.name}: {_lines(n)} could not be read and {_were(n)} skipped: "
                f"{self.unreadable.describe()}"
            )
        if n := self.unpaired.count:
            found.append(
                f"{self.name}: {_lines(n)} without {_its(n)} twin (speed and flow of one "
                f"location, lane and minute are published as a pair) {_were(n)} skipped: "
                f"{self.unpaired.describe()}"
            )
        if n := self.repeated.count:
            found.append(
                f"{self.name}: {_lines(n)} repeating an observation {_were(n)} skipped: "
                f"{self.repeated.describe()}"
            )
        if n := self.minutes_out_of_order:
            found.append(
                f"{self.name}: the file is not sorted by timestamp ({n} run(s) of lines go "
                "back in time); each run of one minute was published as its own data minute"
            )
        return found

    def nothing_to_replay(self) -> str:
        """The error when no pair could be read at all."""
        if not self.observations:
            return (
                f"{self.name}: no line could be read as an NDW observation "
                f"({_lines(self.lines)}; {self.unreadable.describe()})"
            )
        return (
            f"{self.name}: nothing to replay, no observation has its twin (speed and flow of "
            f"one location, lane and minute; {self.observations} observations: "
            f"{self.unpaired.describe()})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "ndw",
            "lines": self.lines,
            "observations": self.observations,
            "pairs": self.pairs,
            "minutes": self.minutes,
            "minutes_out_of_order": self.minutes_out_of_order,
            "unreadable": self.unreadable.to_dict(),
            "unpaired": self.unpaired.to_dict(),
            "repeated": self.repeated.to_dict(),
        }


def _lines(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"


def _were(n: int) -> str:
    return "were" if n != 1 else "was"


def _its(n: int) -> str:
    return "their" if n != 1 else "its"


def is_ndw(lines: Iterable[str]) -> bool:
    """Whether a file whose first lines are ``lines`` is an NDW export.

    The first line that looks like either format decides: ``<key>/lane<k>=`` is
    NDW, ``{`` starts a JSON-lines message; blank and unrecognisable lines are
    passed over (a broken first line does not hide the format).
    """
    for text in lines:
        stripped = text.strip()
        if stripped.startswith("{"):
            return False
        key, sep, _ = stripped.partition("=")
        if sep and _KEY.fullmatch(key.rstrip()):
            return True
    return False


def parse_line(text: str, number: int) -> Observation:
    """One line as an :class:`Observation`; :class:`LineError` says why it cannot be read."""
    try:
        text.encode()
    except UnicodeEncodeError as err:  # undecodable bytes, kept as surrogates by the reader
        raise LineError("not UTF-8 text") from err
    key, sep, value = text.strip().partition("=")
    found = _KEY.fullmatch(key.rstrip()) if sep else None
    if found is None:
        raise LineError("no key <geohash path>/<location id>/lane<k>= before the JSON")
    lane = int(found["lane"])
    if lane < 1:
        raise LineError(f"lane must be 1 or more, got lane{found['lane']}")
    try:
        obj = json.loads(value)
    except json.JSONDecodeError as err:
        raise LineError(f"not JSON after the key ({err.msg})") from err
    if not isinstance(obj, dict):
        raise LineError("the value is not a JSON object")
    kinds = [kind for kind in schema.KINDS if kind in obj]
    if len(kinds) != 1:
        raise LineError("both speed and flow" if kinds else "neither speed nor flow")
    kind = kinds[0]
    measured = float(_number(obj, kind))
    if kind == schema.FLOW:
        if _number(obj, "period") <= 0:
            raise LineError(f"period must be > 0 s, got {obj['period']!r}")
        measured = _per_minute(measured)
    num_lanes = obj.get("num_lanes")
    if not isinstance(num_lanes, int) or isinstance(num_lanes, bool) or num_lanes < 1:
        raise LineError(f"num_lanes: expected a whole number >= 1, got {num_lanes!r}")
    message = {
        schema.LOCATION_ID: found["location"],
        schema.LANE: lane,
        schema.OBSERVATION_TS: (minute_ms := _minute_ms(obj.get("timestamp"))),
        kind: measured,
        schema.LATITUDE: float(_number(obj, "lat")),
        schema.LONGITUDE: float(_number(obj, "long")),
        schema.NUM_LANES: num_lanes,
        schema.ACCURACY: float(_number(obj, "accuracy")),
        schema.SEQ: 0,  # the publisher's, set when sent
        schema.SCHEDULED_TS: 0,
    }
    if problems := validate_input(message):  # a guard: the checks above should cover it
        raise LineError("; ".join(problems))
    return Observation(number, minute_ms, kind, message)


def _number(obj: dict[str, Any], name: str) -> float:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LineError(f"{name}: expected a number, got {value!r}")
    return value


def _per_minute(per_hour: float) -> float:
    """Vehicles per hour (NDW's flow) as vehicles per minute (the contract's); whole when exact."""
    value = round(per_hour * _SECONDS_PER_MINUTE / _SECONDS_PER_HOUR, 3)
    return int(value) if float(value).is_integer() else value


def _minute_ms(stamp: Any) -> int:
    if not isinstance(stamp, str):
        raise LineError(f"timestamp: expected 'YYYY-MM-DD HH:MM:SS.f', got {stamp!r}")
    return _minute_of(stamp)


@functools.lru_cache(maxsize=256)
def _minute_of(stamp: str) -> int:
    """Start of ``stamp``'s minute, epoch ms (cached: every line of a minute repeats it)."""
    found = _TIMESTAMP.fullmatch(stamp)
    if found is None:
        raise LineError(f"timestamp: expected 'YYYY-MM-DD HH:MM:SS.f', got {stamp!r}")
    try:
        minute = datetime.strptime(
            f"{found['date']} {found['hour']}:{found['minute']}", "%Y-%m-%d %H:%M"
        ).replace(tzinfo=UTC)
    except ValueError as err:
        raise LineError(f"timestamp: {stamp!r} is not a date and time ({err})") from err
    return int(minute.timestamp() * 1000)


def read_minutes(lines: Iterable[str], report: Report) -> Iterator[list[dict[str, Any]]]:
    """The paired messages of each data minute, twins adjacent; ``report`` keeps count.

    Lines are numbered from 1 as given (blank lines count but are passed over).
    A minute without a single pair yields nothing.
    """
    run: list[Observation] = []
    previous: int | None = None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        report.lines += 1
        try:
            observation = parse_line(text, number)
        except LineError as err:
            report.unreadable.add(number, str(err))
            continue
        report.observations += 1
        if run and observation.minute_ms != run[0].minute_ms:
            if messages := _close(run, previous, report):
                yield messages
            previous, run = run[0].minute_ms, []
        run.append(observation)
    if run and (messages := _close(run, previous, report)):
        yield messages


def _close(run: list[Observation], previous: int | None, report: Report) -> list[dict[str, Any]]:
    """The pairs of a finished run of one minute; counts a run that goes back in time."""
    if previous is not None and run[0].minute_ms < previous:
        report.minutes_out_of_order += 1
    return pair(run, report)


def pair(minute: list[Observation], report: Report) -> list[dict[str, Any]]:
    """The messages of one minute's pairs, twins adjacent (speed first), in order of
    each pair's first line; lone and repeated observations are reported, not returned."""
    slots: dict[tuple[str, int], dict[str, Observation]] = {}
    for observation in minute:
        m = observation.message
        twins = slots.setdefault((m[schema.LOCATION_ID], m[schema.LANE]), {})
        if first := twins.get(observation.kind):
            report.repeated.add(
                observation.line,
                f"a second {observation.kind} of {observation.where}, first on line {first.line}",
            )
            continue
        twins[observation.kind] = observation
    messages: list[dict[str, Any]] = []
    for twins in slots.values():
        if len(twins) == len(schema.KINDS):
            messages += [twins[kind].message for kind in schema.KINDS]
            continue
        (lone,) = twins.values()
        missing = schema.FLOW if lone.kind == schema.SPEED else schema.SPEED
        report.unpaired.add(lone.line, f"{lone.kind} of {lone.where}, no {missing}")
    if messages:
        report.pairs += len(messages) // len(schema.KINDS)
        report.minutes += 1
    return messages
