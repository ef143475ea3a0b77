"""Your own data: a JSON-lines file sent as it is, its malformed lines counted, never sent."""

import json
import subprocess
import sys

import pytest

from ground.errors import ConfigError, PublishError
from publisher.config import PublisherConfig
from publisher.lines import LinesSource, Report, due_times, read


def _lines(n: int, bad: set[int]) -> list[bytes]:
    """``n`` records one 100 ms apart, a malformed line at each index in ``bad``."""
    kinds = [b"not json", b"[1, 2]", b'{"other": 1}', b'{"sensor": "a", "t": "noon"}']
    return [
        kinds[i % len(kinds)]
        if i in bad
        else json.dumps({"sensor": f"s{i % 7}", "t": 1_000_000 + 100 * i, "v": i}).encode()
        for i in range(n)
    ]


def test_malformed_lines_are_counted_with_their_numbers_and_never_sent():
    report = Report("f.jsonl")
    found = read(_lines(12, {1, 2, 3, 4}), "sensor", "t", report)
    assert len(found) == 8 and report.lines == 12 and report.malformed == 4
    assert [n for n, _ in report.examples] == [2, 3, 4, 5]
    assert [why for _, why in report.examples] == [
        "not a JSON object", "no 'sensor'", "'t' is not a number", "not JSON",
    ]  # fmt: skip
    value, key, at = found[0]
    assert json.loads(value)["v"] == 0 and key == b"s0" and at == 1_000_000
    assert "4 of 12 lines malformed" in report.warnings()[0]


def test_the_pace_is_the_rate_or_the_files_own_scaled():
    assert due_times([None, None, None], rate=4, time_scale=1) == [0, 0.25, 0.5]
    # the file's own pace, twice as fast; a time that goes back is sent right after
    assert due_times([1000.0, 1400.0, 1200.0, 3000.0], rate=4, time_scale=2) == [0, 0.2, 0.2, 1.0]


def test_a_source_sends_each_record_when_due(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(b"\n".join(_lines(25, {3})))
    config = PublisherConfig(from_file=str(path), key_field="sensor", time_field="t")
    source = LinesSource(config)
    first, second, third = source.offsets(0), source.offsets(1), source.offsets(2)
    assert len(first) == 9 and len(second) == 10 and len(third) == 5  # 24 sent, one a 100 ms
    assert source.offsets(3) is None and source.report.malformed == 1
    sent = []
    source.send(lambda topic, value, key: sent.append((topic, key)), 2, 0, 0, 0)
    assert sent == [("speed", b"s6")]


def test_bad_settings_and_files_are_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="give from_file too"):
        PublisherConfig(key_field="sensor")
    with pytest.raises(ConfigError, match="give key_field too"):
        PublisherConfig(from_file="x", time_field="t")
    empty = tmp_path / "bad.jsonl"
    empty.write_bytes(b"nothing here\n")
    with pytest.raises(PublishError, match="no line to send"):
        LinesSource(PublisherConfig(from_file=str(empty), key_field="sensor"))
    with pytest.raises(PublishError, match="cannot read"):
        LinesSource(PublisherConfig(from_file=str(tmp_path / "none"), key_field="sensor"))


@pytest.mark.integration
def test_ten_thousand_lines_with_ten_malformed_send_9990(kafka_bootstrap, tmp_path, unique):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(b"\n".join(_lines(10_000, set(range(5, 10_000, 1000)))) + b"\n")
    summary_file = tmp_path / "publish.json"
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "publish", "--from-file", str(path), "--key-field",
         "sensor", "--rate", "5000", "--speed-topic", f"{unique}-in", "--flow-topic",
         f"{unique}-other", "--bootstrap", kafka_bootstrap, "--summary", str(summary_file)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(summary_file.read_text())
    assert summary["messages"] == {f"{unique}-in": 9990, f"{unique}-other": 0}
    assert summary["delivered"] == 9990 and summary["replay"]["malformed"] == 10
    assert "10 of 10000 lines malformed" in done.stderr
