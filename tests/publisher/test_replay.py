"""Reading a replay file: minutes, validation, twins sent together."""

import io
import json

import pytest

from ground import contract as schema
from ground.errors import PublishError
from publisher.replay import read_minutes, sends_of_minute


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
