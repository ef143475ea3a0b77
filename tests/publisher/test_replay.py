"""Reading a replay file: minutes, validation, twins sent together."""

import io
import json

import pytest

from ground import contract as schema
from ground.config import from_mapping
from ground.errors import FileError, PublishError
from publisher.config import PublisherConfig
from publisher.replay import ReplaySource, read_minutes, sends_of_minute


def line(ts, loc="RWS01_MONIBAS_0021hrl0414ra", lane=1, kind=schema.SPEED, value=88.0):
    return json.dumps(
        {
            schema.LOCATION_ID: loc,
            schema.LANE: lane,
            schema.OBSERVATION_TS: ts,
            kind: value,
            schema.LATITUDE: 52.1,
            schema.LONGITUDE: 5.1,
            schema.NUM_LANES: 2,
            schema.ACCURACY: 100,
        }
    )


def test_consecutive_equal_observation_times_form_one_minute():
    text = "\n".join(
        [line(60_000), line(60_000, kind=schema.FLOW, value=12), "", line(120_000, lane=2)]
    )
    minutes = list(read_minutes(io.StringIO(text)))
    assert [len(m) for m in minutes] == [2, 1]
    assert minutes[0][0][schema.ACCURACY] == 100.0  # an int accuracy is read as a float
    assert isinstance(minutes[0][0][schema.ACCURACY], float)


@pytest.mark.parametrize(
    "bad, problem",
    [("not json", "not JSON"), ("[1, 2]", "JSON object"), ('{"lane": 1}', "location_id")],
)
def test_bad_lines_name_the_line(bad, problem):
    text = line(60_000) + "\n" + bad + "\n"
    with pytest.raises(PublishError, match=rf"replay.jsonl:2: .*{problem}"):
        list(read_minutes(io.StringIO(text), "replay.jsonl"))


def test_sends_keep_twins_together_in_first_seen_order():
    minute = [
        json.loads(line(0, loc="A", lane=1)),
        json.loads(line(0, loc="B", lane=1)),
        json.loads(line(0, loc="A", lane=1, kind=schema.FLOW, value=3)),
        json.loads(line(0, loc="A", lane=2)),
    ]
    sends = sends_of_minute(minute)
    assert [[(m[schema.LOCATION_ID], m[schema.LANE]) for m in s] for s in sends] == [
        [("A", 1), ("A", 1)],
        [("B", 1)],
        [("A", 2)],
    ]


def _source(path):
    return ReplaySource(from_mapping(PublisherConfig, {"from_file": str(path)}, "publisher"))


def test_a_replay_file_is_checked_whole_before_its_first_send(tmp_path):
    path = tmp_path / "replay.jsonl"
    lines = [line(60_000).encode(), b"", line(120_000).encode(), b'{"lane": 1}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(PublishError, match=r"replay\.jsonl:4: .*location_id"):
        _source(path)  # the last line's problem, before a tick is asked for
    lines[-1] = line(120_000, lane=2).encode("utf-8")
    path.write_bytes(b"\n".join([*lines[:2], lines[2].replace(b"RWS", b"R\xe9S"), *lines[3:]]))
    with pytest.raises(FileError) as caught:
        _source(path)
    assert str(caught.value) == (
        f"{path}: line 3, column 19: byte 0xe9 is not UTF-8 (save the file as UTF-8)"
    )
    path.write_bytes(b"\n".join(lines))
    source = _source(path)  # read again as it is sent
    assert [len(source.offsets(t) or []) for t in range(4)] == [1, 2, 0, 0]
