"""``stagebench publish`` run as a user would: a subprocess against the real broker."""

import json
import signal
import subprocess
import sys

import pytest

from ground import contract as schema
from ground.kafka.topics import create_topics, inspect_topics
from ground.malformed import validate_input
from publisher.codec import decode
from tests.publisher.test_rate import read_all

pytestmark = pytest.mark.integration


def publish_cli(bootstrap, *args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "stagebench", "publish", "--bootstrap", bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_publish_creates_topics_reports_and_writes_the_summary(kafka_bootstrap, unique, tmp_path):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    summary_path = tmp_path / "run" / "publisher.json"
    proc = publish_cli(
        kafka_bootstrap,
        "--locations", "5", "--duration", "2", "--speed-topic", speed, "--flow-topic", flow,
        "--summary", str(summary_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "5 locations" in proc.stderr and "rate derived" in proc.stderr
    summary = json.loads(summary_path.read_text())
    assert summary["locations"] == 5
    assert summary["messages"][speed] == summary["messages"][flow] == summary["lanes"] * 2
    assert summary["delivery_errors"] == 0
    assert set(summary["send_lag_ms"]) == {"p50", "p99", "max"}
    assert f"sent {2 * summary['messages'][speed]} messages" in proc.stdout
    report = inspect_topics(kafka_bootstrap, [speed, flow])
    assert report.problems == [] and set(report.leaders) == {speed, flow}


def test_replay_publishes_the_file_with_fresh_times(kafka_bootstrap, unique, tmp_path):
    lines = []
    for minute in range(3):
        for lane in (1, 2):
            for kind, value in ((schema.SPEED, 97.5), (schema.FLOW, 21)):
                lines.append(
                    {
                        schema.LOCATION_ID: "RWS01_MONIBAS_0101hrl0123ra",
                        schema.LANE: lane,
                        schema.OBSERVATION_TS: 1_600_000_000_000 + 60_000 * minute,
                        kind: value,
                        schema.LATITUDE: 52.09,
                        schema.LONGITUDE: 5.12,
                        schema.NUM_LANES: 2,
                        schema.ACCURACY: 100,
                    }
                )
    path = tmp_path / "ndw.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    summary_path = tmp_path / "summary.json"
    proc = publish_cli(
        kafka_bootstrap,
        "--from-file", str(path), "--speed-topic", speed, "--flow-topic", flow,
        "--summary", str(summary_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(summary_path.read_text())
    assert summary["workload"] == "replay" and summary["locations"] == 1
    records = read_all(kafka_bootstrap, [speed, flow], 12)
    assert len(records) == 12
    messages = [decode(r.value) for r in records]
    start = summary["start_ms"]
    assert {m[schema.OBSERVATION_TS] for m in messages} == {start, start + 1000, start + 2000}
    speeds = [m for m in messages if schema.SPEED in m]
    assert [m[schema.SEQ] for m in speeds] == list(range(6))
    assert all(validate_input(m) == [] for m in messages)


def test_delivery_errors_fail_the_command(kafka_bootstrap, unique):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    # every value is larger than the topics accept: the broker refuses each record
    create_topics(kafka_bootstrap, [speed, flow], config={"max.message.bytes": "100"})
    proc = publish_cli(
        kafka_bootstrap,
        "--rate", "100", "--duration", "1", "--speed-topic", speed, "--flow-topic", flow,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "ERROR: 100 messages were not delivered" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_option_is_a_one_line_error(kafka_bootstrap):
    proc = publish_cli(kafka_bootstrap, "--workload", "ramp")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ERROR:") and "ramp_rates" in proc.stderr


def test_sigint_stops_cleanly_with_a_summary(kafka_bootstrap, unique, tmp_path):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    summary_path = tmp_path / "summary.json"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "stagebench", "publish", "--bootstrap", kafka_bootstrap,
            "--rate", "1000", "--duration", "60", "--speed-topic", speed, "--flow-topic", flow,
            "--summary", str(summary_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        # not a terminal: one progress line when sending starts, then one every 5 s
        line = ""
        while "sent" not in line:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "publish exited before sending"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "stopped early" in out and "Traceback" not in err
    summary = json.loads(summary_path.read_text())
    assert summary["stopped_early"] and summary["delivered"] == sum(summary["messages"].values())
    assert (
        len(read_all(kafka_bootstrap, [speed, flow], summary["delivered"])) == summary["delivered"]
    )
