"""Your own data: a JSON-lines file replayed as it is, for your own job (docs/own-pipeline.md).

Each line that is a JSON object with the key field (``[publisher] key_field``) is sent
unchanged to the first input topic, keyed by that field's value. The pace is either a
constant ``rate``, or, with ``time_field``, the file's own: each line is due when its
time (epoch ms) lies that far after the first line's, divided by ``time_scale`` (2:
twice as fast); a time earlier than the line before is sent at once after it. A line
that is not such an object, lacks the key, or has a time that is not a number is
counted and never sent, and the first few are reported with their line numbers.

The file is read whole before the first send, so the send loop never waits on the disk.
"""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.errors import PublishError
from publisher.config import DEFAULT_RATE, PublisherConfig
from publisher.source import Produce

EXAMPLES = 5
"""Malformed lines reported with their number and reason."""


@dataclass
class Report:
    """What the file held: its lines, those sent and those malformed, with examples."""

    name: str
    lines: int = 0
    malformed: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)

    def skip(self, number: int, reason: str) -> None:
        self.malformed += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append((number, reason))

    def warnings(self) -> list[str]:
        if not self.malformed:
            return []
        first = "; ".join(f"line {n}: {why}" for n, why in self.examples)
        return [
            f"{self.name}: {self.malformed} of {self.lines} lines malformed, not sent ({first})"
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "lines": self.lines,
            "malformed": self.malformed,
            "examples": [{"line": n, "reason": why} for n, why in self.examples],
        }


def read(
    lines: list[bytes], key_field: str, time_field: str | None, report: Report
) -> list[tuple[bytes, bytes, float | None]]:
    """The sendable lines of a file: (value, key, time in ms or None), the others counted
    in ``report``."""
    found = []
    for number, raw in enumerate(lines, 1):
        value = raw.rstrip(b"\r\n")
        if not value.strip():
            continue
        report.lines += 1
        try:
            record = json.loads(value)
        except (ValueError, UnicodeDecodeError):
            report.skip(number, "not JSON")
            continue
        if not isinstance(record, dict):
            report.skip(number, "not a JSON object")
            continue
        key = record.get(key_field)
        if key is None:
            report.skip(number, f"no {key_field!r}")
            continue
        at = None
        if time_field is not None:
            at = record.get(time_field)
            if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
                report.skip(number, f"{time_field!r} is not a number")
                continue
        text = key if isinstance(key, str) else json.dumps(key)
        found.append((value, text.encode(), None if at is None else float(at)))
    return found


def due_times(times: list[float | None], rate: float, time_scale: float) -> list[float]:
    """When each record is due, seconds after the start: at ``rate`` per second, or (times
    given) at the file's own pace scaled by ``time_scale``, never earlier than the one before."""
    if not times or times[0] is None:
        return [i / rate for i in range(len(times))]
    first, due, last = float(times[0]), [], 0.0
    for at in times:
        last = max(last, (float(at or first) - first) / 1000 / time_scale)
        due.append(last)
    return due


class LinesSource:
    """The records of a JSON-lines file, one send each, paced by :func:`due_times`."""

    def __init__(self, config: PublisherConfig) -> None:
        path = Path(config.from_file or "")
        try:
            lines = path.read_bytes().splitlines()
        except OSError as err:
            raise PublishError(f"cannot read {path}: {err.strerror}") from err
        self.report = Report(str(path))
        assert config.key_field is not None
        records = read(lines, config.key_field, config.time_field, self.report)
        if not records:
            raise PublishError(f"{path}: no line to send ({self.report.warnings() or 'empty'})")
        times = [at for _, _, at in records]
        self._due = due_times(times, config.rate or DEFAULT_RATE, config.time_scale)
        self._records = records
        self._topic = config.speed_topic
        self._tick_s = config.tick_s
        self._end_s = config.end_s
        self._next = 0
        self._start = 0
        self.locations = {key for _, key, _ in records}
        """The distinct keys."""
        self.lanes: set[tuple[str, int]] = set()

    def offsets(self, tick: int) -> list[float] | None:
        end = min((tick + 1) * self._tick_s, self._end_s)
        if self._next >= len(self._due) or tick * self._tick_s >= self._end_s:
            return None
        self._start = self._next
        while self._next < len(self._due) and self._due[self._next] < end:
            self._next += 1
        return self._due[self._start : self._next]

    def send(
        self, produce: Produce, tick: int, index: int, observation_ts: int, scheduled_ts: int
    ) -> int:
        value, key, _ = self._records[self._start + index]
        produce(self._topic, value, key)
        return 1
