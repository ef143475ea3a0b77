"""`stagebench topics prune`: past runs' topics deleted by age, and the line a run ends
with while the embedded broker stays up."""

import argparse
import os
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from ground.kafka.broker import EmbeddedBroker
from ground.kafka.naming import RunTopics, run_of
from ground.kafka.topics import PastRun, create_topics, older_than
from stagebench.cli.shared import say_what_stays_running
from stagebench.cli.topics import duration_ms


def test_a_topic_belongs_to_the_run_its_name_carries():
    topics = RunTopics.for_run("ab12cd34")
    assert {run_of(name) for name in topics.all} == {"stagebench-ab12cd34"}
    changelog = "stagebench-ab12cd34-KSTREAM-JOINTHIS-0000000004-store-changelog"
    assert run_of(changelog) == "stagebench-ab12cd34"
    assert run_of("__consumer_offsets") is None
    assert run_of("stagebench-") is None
    assert run_of("orders-ab12cd34-out") is None
    assert run_of("stagebench-orders-v2") is None  # no run id: a topic of the user's
    smoke = "stagebench-smoke-0a1b2c3d"
    assert run_of(smoke) == smoke  # each smoke test's topic on its own


def test_only_runs_of_a_known_age_past_it_are_old():
    runs = [
        PastRun("stagebench-a", ("stagebench-a-out",), 1_000),
        PastRun("stagebench-b", ("stagebench-b-out",), 9_000),
        PastRun("stagebench-c", ("stagebench-c-out",), None),  # no record yet: kept
    ]
    assert [r.run for r in older_than(runs, now_ms=10_000, age_ms=5_000)] == ["stagebench-a"]
    assert [r.run for r in older_than(runs, now_ms=10_000, age_ms=0)] == [
        "stagebench-a",
        "stagebench-b",
    ]


@pytest.mark.parametrize(
    ("text", "ms"), [("7d", 604_800_000), ("12h", 43_200_000), ("30m", 1_800_000), ("0s", 0)]
)
def test_an_age_is_a_number_and_a_unit(text, ms):
    assert duration_ms(text) == ms


@pytest.mark.parametrize("text", ["7", "d", "-1d", "7w", "1.5.1h"])
def test_an_age_without_its_unit_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="a number and s, m, h or d"):
        duration_ms(text)


def _prune(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "STAGEBENCH_HOME": str(home)}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "stagebench", "topics", "prune", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.integration
def test_prune_deletes_the_topics_of_old_runs_on_the_embedded_broker(tmp_path, capsys, monkeypatch):
    """A broker of its own: a prune of every age would take other tests' topics."""
    assert "nothing to prune" in _prune(tmp_path).stdout  # no broker: none started
    with EmbeddedBroker(home=tmp_path / "broker", heap="384M") as state:
        written, empty = RunTopics.for_run("0123abcd"), RunTopics.for_run("4567ef01")
        create_topics(state.bootstrap, written.all + empty.all)
        producer = Producer({"bootstrap.servers": state.bootstrap})
        producer.produce(written.speed, b"{}")
        assert producer.flush(10) == 0
        time.sleep(0.01)  # its record is older than 0 s

        dry = _prune(tmp_path, "--older-than", "0s", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "would delete stagebench-0123abcd: 3 topics" in dry.stdout
        pruned = _prune(tmp_path, "--older-than", "0s")
        assert pruned.returncode == 0, pruned.stderr
        assert "deleted 3 topics of 1 of 2 runs" in pruned.stdout
        deadline = time.monotonic() + 30
        admin = AdminClient({"bootstrap.servers": state.bootstrap})
        while set(written.all) & set(topics := admin.list_topics(timeout=10).topics):
            assert time.monotonic() < deadline, topics
            time.sleep(0.2)
        assert set(empty.all) <= set(topics)  # no record: its age is unknown, kept

        monkeypatch.setenv("STAGEBENCH_HOME", str(tmp_path))
        monkeypatch.delenv("STAGEBENCH_BOOTSTRAP", raising=False)
        capsys.readouterr()
        say_what_stays_running(state.bootstrap)  # a command given a Kafka: nothing said
        assert capsys.readouterr().err == ""
        say_what_stays_running(None)
        note = capsys.readouterr().err
        assert "The embedded broker is still running (" in note
        assert "`stagebench broker stop` stops it" in note
