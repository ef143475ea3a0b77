"""Each stage against the real broker: the ``stagebench pipeline`` command end to end.

Input is produced first (a few hundred messages plus a later "flush" second that
moves the watermark past every input second), then the command runs in a
subprocess until the outputs the input implies are on the output topic, and stops
gracefully on SIGTERM.
"""

import json
import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Consumer, Producer

from ground.contract import (
    FLOW,
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    KIND,
    LANE,
    LOCATION_ID,
    OBSERVATION_TS,
    RECORD,
    RUN_ID,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
    SPEED,
    WINDOW_END,
    WINDOW_START,
)
from ground.kafka.topics import create_topics
from tests.pipelines.test_stages import T0, message

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SECONDS = 5
LOCATIONS = {f"L{i:02d}": 2 + i % 2 for i in range(8)}  # 2 or 3 lanes
FLUSH_SECOND = SECONDS + 8
WAIT_S = 150


def inputs() -> list[tuple[str, dict]]:
    """(kind, message) of every location/lane/second; location L00 misses lane 2 at second 1."""
    out = []
    for second in range(SECONDS):
        for location, lanes in LOCATIONS.items():
            for lane in range(1, lanes + 1):
                if (location, lane, second) == ("L00", 2, 1):
                    continue
                out.append((SPEED, message(SPEED, location, lane, second, 70.0 + lane, lanes)))
                out.append((FLOW, message(FLOW, location, lane, second, 5.0 * lane, lanes)))
    for lane in (1, 2):  # moves the watermark past every second above
        for kind in (SPEED, FLOW):
            out.append((kind, message(kind, "L00", lane, FLUSH_SECOND, 50.0, 2)))
    return out


def produce(bootstrap: str, topics: dict[str, str], records: list[tuple[str, dict]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for kind, msg in records:
        producer.produce(topics[kind], key=msg[LOCATION_ID], value=json.dumps(msg))
    # valid JSON (ingest embeds it unchanged) but not an input message: parse drops it
    producer.produce(topics[SPEED], key="L99", value=b'{"malformed": true}')
    assert producer.flush(30) == 0


def consume(bootstrap: str, topic: str, want: int, deadline: float) -> list[tuple[int, int, dict]]:
    """(timestamp type, broker timestamp, value) of output records until ``want`` or deadline."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    out = []
    try:
        while len(out) < want and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            ts_type, ts = msg.timestamp()
            out.append((ts_type, ts, json.loads(msg.value())))
        # anything beyond the expected count is a duplicate or a wrong output
        extra_deadline = time.monotonic() + 3
        while time.monotonic() < extra_deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                ts_type, ts = msg.timestamp()
                out.append((ts_type, ts, json.loads(msg.value())))
    finally:
        consumer.close()
    return out


def expected_count(stage: str, records: list[tuple[str, dict]]) -> int:
    """Outputs the input implies; a window of the flush second never closes (no later data)."""
    pairs = {(m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]) for _, m in records}
    return {
        "ingest": len(records) + 1,
        "parse": len(records),
        "join": len(pairs),
        "tumbling": len(_closed_seconds(records)),
        "sliding": len(_closed_seconds(records)),
    }[stage]


def _closed_seconds(records: list[tuple[str, dict]]) -> list[tuple[str, int]]:
    flush = T0 + FLUSH_SECOND * 1000
    return sorted(
        {(m[LOCATION_ID], m[OBSERVATION_TS]) for _, m in records if m[OBSERVATION_TS] < flush}
    )


def _second(stage: str, value: dict) -> int | None:
    """The location-second an output of a window stage belongs to."""
    if stage == "tumbling":
        return value[WINDOW_START]
    if stage == "sliding":
        return value[WINDOW_END] - 1000
    return None


@pytest.mark.parametrize(
    ("stage", "impl", "trigger"),
    [
        ("ingest", "builtin", "processing-time"),
        ("ingest", "builtin", "real-time"),
        ("parse", "builtin", "processing-time"),
        ("join", "builtin", "processing-time"),
        ("tumbling", "builtin", "processing-time"),
        ("tumbling", "custom", "processing-time"),
        ("sliding", "builtin", "processing-time"),
        ("sliding", "custom", "processing-time"),
    ],
)
def test_stage_writes_expected_outputs(kafka_bootstrap, unique, tmp_path, stage, impl, trigger):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    output = f"out-{unique}"
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    create_topics(kafka_bootstrap, [output])
    records = inputs()
    produce(kafka_bootstrap, topics, records)
    run_dir = tmp_path / "run"
    command = [
        sys.executable, "-m", "stagebench", "pipeline",
        "--stage", stage, "--impl", impl,
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", output, "--run-id", unique, "--run-dir", str(run_dir),
        "--bootstrap", kafka_bootstrap, "--master", "local[2]", "--shuffle-partitions", "2",
        "--trigger", trigger,
    ]  # fmt: skip
    if trigger == "real-time":  # a task slot per input partition (2 topics x 2)
        command += ["--master", "local[4]"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # custom windows also emit the complete flush second at once
        want = expected_count(stage, records) + (impl == "custom")
        out = consume(kafka_bootstrap, output, want, time.monotonic() + WAIT_S)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr[-3000:]

    # custom windows emit the (complete) flush second at once: not part of the check
    values = [v for _, _, v in out if _second(stage, v) != T0 + FLUSH_SECOND * 1000]
    assert all(ts_type == TIMESTAMP_LOG_APPEND_TIME for ts_type, _, _ in out)
    assert all(v[INPUT_TS_LATEST] <= ts for _, ts, v in out), "output before its input"
    assert all(v[INPUT_TS_EARLIEST] <= v[INPUT_TS_LATEST] for v in values)
    assert all(v[RUN_ID] == unique for v in values)
    _check_stage(stage, records, values)

    assert (run_dir / "pipeline.ready").exists()
    assert json.loads((run_dir / "pipeline.json").read_text())["pipeline"]["stage"] == stage
    events = [json.loads(line) for line in (run_dir / "engine_progress.jsonl").open()]
    kinds = {e["event"] for e in events}
    # a real-time batch lasts its checkpoint interval (5 min): no progress within the test
    assert {"started", "progress"} - kinds <= ({"progress"} if trigger == "real-time" else set())
    if stage != "ingest":
        malformed = sum(
            e.get("observedMetrics", {}).get("parse", {}).get("malformed", 0)
            for e in events
            if e["event"] == "progress"
        )
        assert malformed == 1


def _check_stage(stage: str, records, values: list[dict]) -> None:
    if stage == "ingest":
        identities = {(v[SOURCE_TOPIC], v[SOURCE_PARTITION], v[SOURCE_OFFSET]) for v in values}
        assert len(identities) == len(values) == len(records) + 1
        assert all(v[INPUT_COUNT] == 1 for v in values)
        assert sum(v[RECORD] == m for v in values for _, m in records[:1]) == 1
    elif stage == "parse":
        got = sorted((v[KIND], v[LOCATION_ID], v[LANE], v[OBSERVATION_TS]) for v in values)
        sent = sorted((k, m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]) for k, m in records)
        assert got == sent
    elif stage == "join":
        keys = sorted((v[LOCATION_ID], v[LANE], v[OBSERVATION_TS]) for v in values)
        pairs = {(m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]) for _, m in records}
        assert keys == sorted(pairs)
        assert all(v[INPUT_COUNT] == 2 for v in values)
    else:
        keys = sorted((v[LOCATION_ID], _second(stage, v)) for v in values)
        assert keys == _closed_seconds(records)
        if stage == "tumbling":
            counts = {(v[LOCATION_ID], v[WINDOW_START]): v[INPUT_COUNT] for v in values}
            assert counts[("L00", T0 + 1000)] == 2  # the second with a missing lane
            assert counts[("L01", T0)] == 6  # 3 lanes, speed and flow each


def test_failing_query_exits_non_zero_with_one_line_error(kafka_bootstrap, unique, tmp_path):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, [*topics.values(), f"out-{unique}"])
    produce(kafka_bootstrap, topics, inputs()[:4])
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", "join",
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", f"out-{unique}", "--run-dir", str(tmp_path / "run"),
        "--bootstrap", kafka_bootstrap, "--master", "local[2]", "--max-seconds", str(WAIT_S),
        # the join's state store cannot be created: the first micro-batch fails
        "--conf", "spark.sql.streaming.stateStore.providerClass=no.such.Provider",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S + 60)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR: ")]
    assert len(errors) == 1
    assert "join query failed" in errors[0]


def test_real_time_mode_refuses_too_few_task_slots(kafka_bootstrap, unique, tmp_path):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", "ingest",
        "--trigger", "real-time", "--master", "local[2]",
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", f"out-{unique}", "--run-dir", str(tmp_path / "run"),
        "--bootstrap", kafka_bootstrap,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("ERROR: real-time mode needs a task slot per input partition")
