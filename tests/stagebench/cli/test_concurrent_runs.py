"""Two `stagebench run` of the floor started at once on one machine, with no Kafka given:
the first starts the embedded broker in a fresh home, the second says that it waits for
that start and runs on the same broker, and both are trusted. The runs are given a secured cluster's
properties on PLAINTEXT (``kafka_canary``): no file of theirs, of the broker's home or of
the caches holds its password. While they run, every process of theirs (the broker the
first starts among them) listens on the loopback interface only."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ground import envvars
from ground.kafka.broker import EmbeddedBroker
from ground.paths import cache_dir
from tests import leaks

pytestmark = pytest.mark.integration

RUN = ["run", "--stage", "floor", "--rate", "200", "--warmup", "1", "--duration", "4",
       "--tail", "1"]  # fmt: skip
TIMEOUT_S = 240


def test_two_runs_at_once_share_one_broker_and_are_both_trusted(tmp_path, kafka_canary):
    began = leaks.now()
    home, results = tmp_path / "home", tmp_path / "results"
    env = {**os.environ, envvars.HOME: str(home)}
    env.pop(envvars.BOOTSTRAP, None)
    command = [sys.executable, "-m", "stagebench", *RUN, "--results", str(results)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "env": env}
    runs = [subprocess.Popen(command, **pipes) for _ in range(2)]
    sockets: set[leaks.Listener] = set()
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while any(run.poll() is None for run in runs) and time.monotonic() < deadline:
            sockets.update(leaks.listening([run.pid for run in runs]))
            time.sleep(0.5)
        errors = [run.communicate(timeout=10)[1] for run in runs]
        written = leaks.files_holding(kafka_canary, results, home, cache_dir(), since=began)
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.wait()
        EmbeddedBroker(home / "broker").stop()
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for err in errors]
    # one started the broker; the other said that it waited for that start
    assert sorted(err.count("Starting Kafka") for err in errors) == [0, 1], errors
    assert sorted(err.count("Waiting for another stagebench command") for err in errors) == [0, 1]
    summaries = [json.loads(path.read_text()) for path in results.glob("*/summary.json")]
    assert len(summaries) == 2
    assert len({summary["run"]["bootstrap"] for summary in summaries}) == 1
    for summary in summaries:
        assert summary["trusted"] is True, summary["warnings"]
        assert summary["records"]["outputs"] > 0 and summary["records"]["missing"] == 0
    assert any(listener.name == "java" for listener in sockets), sockets  # the broker
    assert not leaks.beyond_loopback(sorted(sockets, key=str))
    assert not written, written


def test_the_canary_is_found_where_it_is_written(tmp_path, kafka_canary):
    """The check above would find it: a file that holds it, and one changed too early."""
    (tmp_path / "a").write_text(f"x={kafka_canary}")
    early = tmp_path / "b"
    early.write_text(kafka_canary)
    os.utime(early, (0, 0))
    assert leaks.files_holding(kafka_canary, tmp_path, since=1.0) == [Path(tmp_path / "a")]
