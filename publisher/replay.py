"""Replaying a file of observations (``--from-file``) with the publisher's pacing.

Two formats, told apart by their first lines (:func:`publisher.ndw.is_ndw`):

- JSON lines, each one input message of :mod:`ground.contract` (speed or
  flow). Consecutive lines with the same ``observation_ts`` form one data
  minute. Every line is read and checked when the source is made, before
  anything is sent: a line that is not UTF-8 or breaks the contract is an
  error naming its number, then the file is read again as it is sent.
- The NDW export format (:mod:`publisher.ndw`): paired into the same messages,
  minute by minute; unreadable lines and observations without their twin are
  skipped and reported (:attr:`ReplaySource.report`), and only a file with
  nothing to replay is an error.

Each data minute is published in one tick (``1 / time_scale`` s) like
synthetic data: the speed and flow of one location/lane are sent together,
sends are spread evenly over the tick, and the observation time is rewritten
to the tick's wall-clock start so event time tracks real time
(docs/method.md#data). ``seq`` and ``scheduled_ts`` are the publisher's and are
rewritten too; whatever the file had there is ignored.
"""

import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ground import contract as schema
from ground import files
from ground.errors import PublishError, StagebenchError
from ground.malformed import validate_input
from publisher import ndw
from publisher.codec import encode
from publisher.config import PublisherConfig
from publisher.source import Produce

REWRITTEN = (schema.SEQ, schema.SCHEDULED_TS)
FLOAT_FIELDS = (schema.LATITUDE, schema.LONGITUDE, schema.ACCURACY)
DETECT_LINES = 20
"""Lines read ahead to tell the file's format."""


def read_minutes(lines: Iterable[str], name: str = "input") -> Iterator[list[dict[str, Any]]]:
    """Groups of consecutive messages sharing one observation time, each validated."""
    group: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as err:
            raise PublishError(f"{name}:{number}: not JSON: {err}") from err
        if not isinstance(message, dict):
            raise PublishError(f"{name}:{number}: expected a JSON object")
        for field in REWRITTEN:
            message[field] = 0
        for field in FLOAT_FIELDS:  # exports often write 100 for 100.0
            if type(message.get(field)) is int:
                message[field] = float(message[field])
        problems = validate_input(message)
        if problems:
            raise PublishError(f"{name}:{number}: {'; '.join(problems)}")
        if group and message[schema.OBSERVATION_TS] != group[0][schema.OBSERVATION_TS]:
            yield group
            group = []
        group.append(message)
    if group:
        yield group


def text_lines(lines: Iterable[bytes], name: str) -> Iterator[str]:
    """The lines as text; FileError naming the line and column of a byte that is not
    UTF-8."""
    for number, line in enumerate(lines, 1):
        yield files.decode(line, name, number)


def sends_of_minute(minute: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The minute's messages grouped by location and lane, in first-seen order (twins together)."""
    sends: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for message in minute:
        sends.setdefault((message[schema.LOCATION_ID], message[schema.LANE]), []).append(message)
    return list(sends.values())


class ReplaySource:
    """A :class:`publisher.source.Source` over a JSON-lines file."""

    def __init__(self, config: PublisherConfig) -> None:
        path = Path(config.from_file or "")
        try:
            self._file = path.open("rb")
        except OSError as err:
            raise PublishError(f"cannot read {path}: {err.strerror}") from err
        head = list(itertools.islice(self._file, DETECT_LINES))
        raw = itertools.chain(head, self._file)
        self.report: ndw.Report | None = None
        """What an NDW file held and what was skipped (None for JSON lines)."""
        if ndw.is_ndw(line.decode("utf-8", "replace") for line in head):
            # undecodable bytes stay visible (as surrogates) so the line is reported, not fatal
            self.report = ndw.Report(str(path))
            minutes = ndw.read_minutes(
                (line.decode("utf-8", "surrogateescape") for line in raw), self.report
            )
            first = next(minutes, None)
            if first is None:
                self._file.close()
                raise PublishError(self.report.nothing_to_replay())
            self._minutes: Iterator[list[dict[str, Any]]] = itertools.chain([first], minutes)
        else:
            self._minutes = self._checked(raw, str(path))
        self._tick_s = config.tick_s
        self._end_s = config.end_s
        self._topics = {schema.SPEED: config.speed_topic, schema.FLOW: config.flow_topic}
        self._sends: list[list[dict[str, Any]]] = []
        self._seq: dict[tuple[str, str], int] = {}
        self.locations: set[str] = set()
        self.lanes: set[tuple[str, int]] = set()

    def _checked(self, raw: Iterable[bytes], name: str) -> Iterator[list[dict[str, Any]]]:
        """The minutes of a JSON-lines file once every line is read and checked: the
        file is read again as it is sent, a pipe's minutes are kept."""
        try:
            minutes = read_minutes(text_lines(raw, name), name)
            if not self._file.seekable():
                return iter(list(minutes))
            for _ in minutes:
                pass
        except StagebenchError:
            self._file.close()
            raise
        self._file.seek(0)
        return read_minutes(text_lines(self._file, name), name)

    def offsets(self, tick: int) -> list[float] | None:
        minute = next(self._minutes, None) if tick * self._tick_s < self._end_s else None
        if minute is None:
            self._file.close()
            return None
        self._sends = sends_of_minute(minute)
        step = self._tick_s / len(self._sends)
        return [tick * self._tick_s + i * step for i in range(len(self._sends))]

    def send(
        self, produce: Produce, tick: int, index: int, observation_ts: int, scheduled_ts: int
    ) -> int:
        messages = self._sends[index]
        for message in messages:
            kind = schema.SPEED if schema.SPEED in message else schema.FLOW
            location = message[schema.LOCATION_ID]
            seq_key = (location, kind)
            seq = self._seq.get(seq_key, 0)
            self._seq[seq_key] = seq + 1
            value = {
                **message,
                schema.OBSERVATION_TS: observation_ts,
                schema.SCHEDULED_TS: scheduled_ts,
                schema.SEQ: seq,
            }
            produce(self._topics[kind], encode(value), location.encode())
            self.locations.add(location)
            self.lanes.add((location, message[schema.LANE]))
        return len(messages)
