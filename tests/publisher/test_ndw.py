"""The NDW export format for ``--from-file``: reading, pairing, reporting, replaying.

``data/ndw_sample.txt`` (written for these tests): three locations with two
lanes each over three minutes, 07:00 to 07:02. Line 19 is cut off in the middle
of its JSON; line 24 is the speed of location C, lane 2 at 07:01, whose flow
is missing. Every other line has its twin, so 17 pairs are published. The
integration tests replay it to a real broker; the last one runs the join
stage on a longer NDW file.
"""

import collections
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from ground import contract as schema
from ground.errors import PublishError
from ground.malformed import validate_input
from publisher import ndw
from publisher.codec import check, decode
from publisher.config import PublisherConfig
from publisher.replay import ReplaySource

SAMPLE = Path(__file__).parent / "data" / "ndw_sample.txt"
A = "RWS01_MONIBAS_0041hrl0262ra"
B = "RWS01_MONICA_00D0031A3C2B70100007_1"
C = "RWS01_MONIBAS_0121hrr0153ra"
BROKEN_LINE, UNPAIRED_LINE = 19, 24
PAIRS = 17
MINUTE_0 = int(datetime(2017, 3, 15, 7, 0, tzinfo=UTC).timestamp() * 1000)
LOG_APPEND_TIME = 1  # kafka-python's timestamp_type


def ndw_line(location, lane, kind, value, minute="2017-03-15 07:00:00.0", **extra):
    body = {"lat": 52.1, "long": 5.2, kind: value, "accuracy": 100, "timestamp": minute}
    if kind == schema.FLOW:
        body["period"] = 60
    body.update({"num_lanes": 2, **extra})
    return f"u/1/7/h/{location}/lane{lane}= " + json.dumps(body, separators=(",", ":"))


def sample_lines():
    return SAMPLE.read_text().splitlines(keepends=True)


def read(lines):
    report = ndw.Report("test")
    return list(ndw.read_minutes(lines, report)), report


# --- detection -------------------------------------------------------------------------------


def test_the_sample_is_detected_and_json_lines_are_not():
    assert ndw.is_ndw(sample_lines())
    assert not ndw.is_ndw(['{"location_id": "X", "lane": 1}\n'])
    assert not ndw.is_ndw(["", "\n"])
    # a broken or blank first line does not hide the format
    assert ndw.is_ndw(["\n", "garbage\n", ndw_line("X", 1, "speed", 90)])
    assert ndw.is_ndw(['X/lane2= {"speed":'])  # no geohash path, cut off: still NDW


# --- one line --------------------------------------------------------------------------------


def test_a_flow_line_becomes_a_contract_message_in_vehicles_per_minute():
    line = sample_lines()[0]  # location A, lane 1, flow 1320 veh/h at 07:00
    observation = ndw.parse_line(line, 1)
    assert (observation.line, observation.kind, observation.minute_ms) == (1, "flow", MINUTE_0)
    assert observation.message == {
        schema.LOCATION_ID: A,
        schema.LANE: 1,
        schema.OBSERVATION_TS: MINUTE_0,
        schema.FLOW: 22,  # 1320 vehicles per hour
        schema.LATITUDE: 52.21374,
        schema.LONGITUDE: 5.0812,
        schema.NUM_LANES: 2,
        schema.ACCURACY: 100.0,
        schema.SEQ: 0,
        schema.SCHEDULED_TS: 0,
    }
    assert isinstance(observation.message[schema.ACCURACY], float)
    assert validate_input(observation.message) == []


def test_a_speed_line_keeps_km_per_hour_and_any_second_of_its_minute_counts():
    line = ndw_line("Z", 3, "speed", 97, minute="2017-03-15 07:00:42.5")
    observation = ndw.parse_line(line, 7)
    assert observation.message[schema.SPEED] == 97.0
    assert isinstance(observation.message[schema.SPEED], float)
    assert observation.message[schema.LOCATION_ID] == "Z"
    assert observation.message[schema.LANE] == 3
    assert observation.minute_ms == MINUTE_0


def test_a_flow_that_is_not_whole_vehicles_per_minute_stays_exact():
    assert ndw.parse_line(ndw_line("Z", 1, "flow", 90), 1).message[schema.FLOW] == 1.5


@pytest.mark.parametrize(
    "text, reason",
    [
        ('{"location_id": "X"}', "no key"),
        ("u/1/X/lane1 {}", "no key"),
        ("u/1/X/lane1= [1, 2]", "not a JSON object"),
        ('u/1/X/lane1= {"speed":', "not JSON"),
        ("u/1/X/lane0= " + ndw_line("X", 1, "speed", 90).partition("= ")[2], "lane must be"),
        (ndw_line("X", 1, "speed", 90, flow=600), "both speed and flow"),
        (ndw_line("X", 1, "accuracy", 90), "neither speed nor flow"),
        (ndw_line("X", 1, "speed", "fast"), "speed: expected a number"),
        (ndw_line("X", 1, "speed", True), "speed: expected a number"),
        (ndw_line("X", 1, "speed", 90).replace('"lat":52.1', '"lat":NaN'), "lat: expected"),
        (ndw_line("X", 1, "speed", 90).replace(',"long":5.2', ""), "long: expected"),
        (ndw_line("X", 1, "flow", 600).replace(',"period":60', ""), "period: expected"),
        (ndw_line("X", 1, "flow", 600).replace('"period":60', '"period":0'), "period must be"),
        (ndw_line("X", 1, "speed", 90, num_lanes=0), "num_lanes"),
        (ndw_line("X", 1, "speed", 90, num_lanes=2.5), "num_lanes"),
        (ndw_line("X", 1, "speed", 90, minute="15-03-2017 07:00"), "timestamp: expected"),
        (ndw_line("X", 1, "speed", 90, minute="2017-02-30 07:00:00.0"), "not a date"),
        (ndw_line("X", 1, "speed", 90, minute=1489561200000), "timestamp: expected"),
        ("u/1/X/lane1= {\udcff}", "not UTF-8"),
    ],
)
def test_a_line_that_cannot_be_read_says_why(text, reason):
    with pytest.raises(ndw.LineError, match=reason):
        ndw.parse_line(text, 1)


# --- minutes, pairs and the report -----------------------------------------------------------


def test_the_sample_gives_three_minutes_of_twins_and_reports_both_bad_lines():
    minutes, report = read(sample_lines())
    assert [len(m) for m in minutes] == [12, 10, 12]
    for minute in minutes:
        assert len({m[schema.OBSERVATION_TS] for m in minute}) == 1
        speeds, flows = minute[0::2], minute[1::2]  # twins adjacent, speed first
        assert all(schema.SPEED in m for m in speeds) and all(schema.FLOW in m for m in flows)
        place = [(m[schema.LOCATION_ID], m[schema.LANE]) for m in minute]
        assert place[0::2] == place[1::2]
    # pairs in the order of their first line: C's twins are apart in the first minute
    first = [(m[schema.LOCATION_ID], m[schema.LANE]) for m in minutes[0][0::2]]
    assert first == [(A, 1), (A, 2), (B, 1), (B, 2), (C, 1), (C, 2)]
    assert (C, 2) not in [(m[schema.LOCATION_ID], m[schema.LANE]) for m in minutes[1]]
    assert report.to_dict() | {"unreadable": None, "unpaired": None} == {
        "format": "ndw",
        "lines": 36,
        "observations": 35,
        "pairs": PAIRS,
        "minutes": 3,
        "minutes_out_of_order": 0,
        "unreadable": None,
        "unpaired": None,
        "repeated": {"count": 0, "examples": []},
    }
    assert report.unreadable.count == 1 and report.unreadable.examples[0][0] == BROKEN_LINE
    assert report.unpaired.count == 1
    line, reason = report.unpaired.examples[0]
    assert line == UNPAIRED_LINE and reason == f"speed of {C} lane 2 at 2017-03-15 07:01, no flow"
    unreadable, unpaired = report.warnings()
    assert "1 line could not be read" in unreadable
    assert f"line {BROKEN_LINE} (not JSON" in unreadable
    assert "1 line without its twin" in unpaired and f"line {UNPAIRED_LINE} (speed" in unpaired


def test_a_repeated_observation_is_skipped_and_named():
    lines = [
        ndw_line("X", 1, "speed", 90),
        ndw_line("X", 1, "flow", 600),
        ndw_line("X", 1, "speed", 95),
    ]
    minutes, report = read(lines)
    assert [m.get(schema.SPEED, m.get(schema.FLOW)) for m in minutes[0]] == [90.0, 10]
    first = "a second speed of X lane 1 at 2017-03-15 07:00, first on line 1"
    assert report.repeated.examples == [(3, first)]
    assert "1 line repeating an observation was skipped: line 3" in report.warnings()[0]


def test_a_file_out_of_time_order_is_published_in_file_order_and_reported():
    lines = []
    for minute in ("07:00", "07:01", "07:00"):
        stamp = f"2017-03-15 {minute}:00.0"
        lines += [ndw_line("X", 1, "speed", 90, stamp), ndw_line("X", 1, "flow", 600, stamp)]
    minutes, report = read(lines)
    assert [m[0][schema.OBSERVATION_TS] - MINUTE_0 for m in minutes] == [0, 60_000, 0]
    assert report.minutes_out_of_order == 1
    assert "not sorted by timestamp" in report.warnings()[0]


def test_many_bad_lines_keep_a_few_examples_and_the_count():
    minutes, report = read(["x/lane1= {"] * 12)
    assert minutes == [] and report.unreadable.count == 12
    assert [line for line, _ in report.unreadable.examples] == [1, 2, 3, 4, 5]
    assert report.unreadable.describe().endswith(", …")


def test_a_minute_without_a_pair_publishes_nothing():
    minutes, report = read([ndw_line("X", 1, "speed", 90), ndw_line("Y", 1, "flow", 600)])
    assert minutes == [] and report.minutes == 0 and report.unpaired.count == 2
    assert "no observation has its twin" in report.nothing_to_replay()


# --- replaying a file (no Kafka: the messages are collected) ---------------------------------


def replay(path):
    """Every message the replay of ``path`` sends: (topic, decoded value, key), per tick."""
    source = ReplaySource(PublisherConfig(from_file=str(path)))
    sent = []
    tick = 0
    while (offsets := source.offsets(tick)) is not None:
        for index in range(len(offsets)):

            def produce(topic, value, key, tick=tick):
                assert check(value) == [], value  # contract and 150–220 bytes
                sent.append((tick, topic, decode(value), key.decode()))

            source.send(produce, tick, index, 1_000_000 + 1000 * tick, 1_000_000 + index)
        tick += 1
    return source, sent


def test_replay_sends_twins_with_one_seq_and_fresh_times():
    source, sent = replay(SAMPLE)
    assert source.report is not None and source.report.pairs == PAIRS
    topics = collections.Counter(topic for _, topic, _, _ in sent)
    assert topics == {"speed": PAIRS, "flow": PAIRS}
    assert all(m[schema.OBSERVATION_TS] == 1_000_000 + 1000 * tick for tick, _, m, _ in sent)
    assert all(key == m[schema.LOCATION_ID] for _, _, m, key in sent)
    seqs = collections.defaultdict(list)
    for _, topic, m, _ in sent:
        seqs[topic, m[schema.LOCATION_ID]].append(m[schema.SEQ])
    for location, pairs in ((A, 6), (B, 6), (C, 5)):
        assert seqs["speed", location] == seqs["flow", location] == list(range(pairs))
    for (_, _, s, _), (_, _, f, _) in zip(sent[0::2], sent[1::2], strict=True):
        key = (schema.LOCATION_ID, schema.LANE, schema.OBSERVATION_TS, schema.SEQ)
        assert [s[k] for k in key] == [f[k] for k in key]
    assert (source.locations, len(source.lanes)) == ({A, B, C}, 6)


def test_a_json_lines_file_is_replayed_as_before(tmp_path):
    message = ndw.parse_line(ndw_line("X", 1, "speed", 90), 1).message
    path = tmp_path / "replay.jsonl"
    path.write_text(json.dumps(message) + "\n")
    source, sent = replay(path)
    assert source.report is None and [m[schema.SPEED] for _, _, m, _ in sent] == [90.0]


def test_nothing_readable_is_one_clear_error(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_text('u/1/X/lane1= {"speed":\n\nu/1/X/lane2= {"flow": 60,\n')
    with pytest.raises(PublishError) as caught:
        ReplaySource(PublisherConfig(from_file=str(path)))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: no line could be read as an NDW observation (2 lines;")
    assert "line 1 (not JSON" in message and "line 3 (not JSON" in message


def test_undecodable_bytes_are_an_unreadable_line_not_a_crash(tmp_path):
    path = tmp_path / "latin1.txt"
    lines = [line.encode() for line in sample_lines()]
    lines[4] = lines[4].replace(b'"lat"', b'"l\xe4t"')  # line 5: B lane 1 speed at 07:00
    path.write_bytes(b"".join(lines))
    source, sent = replay(path)
    assert source.report.unreadable.count == 2
    assert source.report.unreadable.examples[0] == (5, "not UTF-8 text")
    assert len(sent) == 2 * (PAIRS - 1)


# --- against a real broker -------------------------------------------------------------------


def stagebench(*args, timeout=120):
    env = {**os.environ}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "stagebench", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def read_topics(bootstrap, topics, expected, timeout_s=30.0):
    """Every record of ``topics`` (one partition each), waiting at most ``timeout_s``."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=1000
    )
    consumer.assign([TopicPartition(t, 0) for t in topics])
    consumer.seek_to_beginning()
    records = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records += batch
        records += [r for batch in consumer.poll(timeout_ms=1000).values() for r in batch]
    finally:
        consumer.close()
    return records


@pytest.mark.integration
def test_publish_replays_the_sample_as_pairs(kafka_bootstrap, unique, tmp_path):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    summary_path = tmp_path / "publisher.json"
    proc = stagebench(
        "publish", "--bootstrap", kafka_bootstrap, "--from-file", str(SAMPLE),
        "--speed-topic", speed, "--flow-topic", flow, "--summary", str(summary_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"line {BROKEN_LINE} (not JSON" in proc.stderr
    assert f"line {UNPAIRED_LINE} (speed of {C} lane 2" in proc.stderr
    assert f"sent {2 * PAIRS} messages" in proc.stdout
    summary = json.loads(summary_path.read_text())
    assert summary["workload"] == "replay" and summary["messages"] == {speed: PAIRS, flow: PAIRS}
    assert (summary["locations"], summary["lanes"]) == (3, 6)
    assert summary["replay"]["pairs"] == PAIRS
    assert summary["replay"]["unreadable"]["examples"][0]["line"] == BROKEN_LINE
    assert summary["replay"]["unpaired"]["examples"][0]["line"] == UNPAIRED_LINE

    records = read_topics(kafka_bootstrap, [speed, flow], 2 * PAIRS)
    per_topic = collections.Counter(r.topic for r in records)
    assert per_topic == {speed: PAIRS, flow: PAIRS}
    assert all(r.timestamp_type == LOG_APPEND_TIME for r in records)
    messages = [(r.topic, decode(r.value), r.key.decode()) for r in records]
    assert all(validate_input(m) == [] and key == m[schema.LOCATION_ID]
               for _, m, key in messages)  # fmt: skip
    start = summary["start_ms"]
    times = {m[schema.OBSERVATION_TS] for _, m, _ in messages}
    assert times == {start, start + 1000, start + 2000}
    # pairing: each location, lane and minute has one speed and one flow with the same seq
    twins = collections.defaultdict(dict)
    for topic, m, _ in messages:
        place = (m[schema.LOCATION_ID], m[schema.LANE], m[schema.OBSERVATION_TS])
        twins[place][topic] = m
    assert len(twins) == PAIRS
    assert all(set(pair) == {speed, flow} for pair in twins.values())
    assert all(pair[speed][schema.SEQ] == pair[flow][schema.SEQ] for pair in twins.values())
    assert (C, 2, start + 1000) not in twins  # the lone speed stayed home
    # seq: per location and topic, gap-free from 0
    seqs = collections.defaultdict(list)
    for topic, m, _ in messages:
        seqs[topic, m[schema.LOCATION_ID]].append(m[schema.SEQ])
    for location, pairs in ((A, 6), (B, 6), (C, 5)):
        assert seqs[speed, location] == seqs[flow, location] == list(range(pairs))
    # flow in vehicles per minute: location A lane 1 counted 1320, 1440, 1500 per hour
    a1 = sorted((p, m) for p, m in twins.items() if p[:2] == (A, 1))
    assert [m[flow][schema.FLOW] for _, m in a1] == [22, 24, 25]


@pytest.mark.integration
def test_publish_of_a_file_with_nothing_readable_is_one_error_line(
    kafka_bootstrap, unique, tmp_path
):
    path = tmp_path / "broken.txt"
    path.write_text('u/1/X/lane1= {"speed":\nu/1/X/lane2= {"flow": 60,\n')
    proc = stagebench(
        "publish", "--bootstrap", kafka_bootstrap, "--from-file", str(path),
        "--speed-topic", f"speed-{unique}", "--flow-topic", f"flow-{unique}",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR:")]
    assert errors == [
        f"ERROR: {path}: no line could be read as an NDW observation (2 lines; "
        "line 1 (not JSON after the key (Expecting value)), "
        "line 2 (not JSON after the key (Expecting property name enclosed in double quotes)))"
    ]


def write_ndw_file(path, locations, minutes):
    """An NDW export of ``locations`` × 2 lanes × ``minutes``, plus one lone speed line and
    one broken line; returns the (location, lane, minute) of the complete pairs."""
    lines, pairs = [], []
    for minute in range(minutes):
        stamp = f"2017-03-15 {7 + minute // 60:02d}:{minute % 60:02d}:00.0"
        for i in range(locations):
            location = f"RWS01_MONIBAS_{i:04d}hrl0100ra"
            for lane in (1, 2):
                flow = 600 + 60 * ((i + lane + minute) % 20)
                lines.append(ndw_line(location, lane, "flow", flow, stamp))
                lines.append(ndw_line(location, lane, "speed", 80 + (i + minute) % 40, stamp))
                pairs.append((location, lane, minute))
    lines.insert(5, 'u/1/7/h/RWS01_MONIBAS_9999hrl0100ra/lane1= {"lat":52.1,"long":')
    lines.append(ndw_line("RWS01_MONIBAS_9998hrl0100ra", 1, "speed", 99, stamp))
    path.write_text("\n".join(lines) + "\n")
    return pairs


@pytest.mark.integration
@pytest.mark.spark
@pytest.mark.slow
def test_a_run_of_the_join_stage_on_an_ndw_file_joins_every_pair(kafka_bootstrap, tmp_path):
    # 10 data minutes, one a second: the file runs out inside the measured period (5 s
    # warm-up + 10 s), after 5 s of it
    pairs = write_ndw_file(tmp_path / "ndw.txt", locations=10, minutes=10)
    config = tmp_path / "bench.toml"
    config.write_text(f"[publisher]\nfrom_file = {json.dumps(str(tmp_path / 'ndw.txt'))}\n")
    result = stagebench(
        "run", "--stage", "join", "--config", str(config), "--duration", "10",
        "--warmup", "5", "--tail", "5", "--bootstrap", kafka_bootstrap,
        "--results", str(tmp_path / "results"), timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = Path(result.stdout.strip().splitlines()[-1].removeprefix("results: "))
    summary = json.loads((run_dir / "summary.json").read_text())
    records = summary["records"]
    assert records["missing"] == 0 and records["duplicates"] == 0, records
    assert records["unexpected"] == 0 and records["negative"] == 0, records
    assert summary.get("trusted") is not False
    publisher = json.loads((run_dir / "publisher.json").read_text())
    assert publisher["replay"]["pairs"] == len(pairs)
    assert publisher["replay"]["unpaired"]["count"] == 1
    assert publisher["replay"]["unreadable"]["count"] == 1
    assert sum(publisher["messages"].values()) == 2 * len(pairs)
    # every output of the run, not only the measured period's: one per paired observation
    outputs = read_topics(kafka_bootstrap, [summary["run"]["output_topic"]], len(pairs))
    joined = collections.Counter(
        (m[schema.LOCATION_ID], m[schema.LANE], m[schema.OBSERVATION_TS])
        for m in (json.loads(r.value) for r in outputs)
    )
    assert len(outputs) == len(pairs) and max(joined.values()) == 1
    start = publisher["start_ms"]
    assert set(joined) == {(loc, lane, start + 1000 * minute) for loc, lane, minute in pairs}
