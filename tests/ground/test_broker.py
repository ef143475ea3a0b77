"""The embedded broker's lifecycle, through the API and the CLI."""

import json
import os
import socket
import subprocess
import sys

import psutil
import pytest

from ground.errors import BrokerError
from ground.kafka.broker import EmbeddedBroker

pytestmark = pytest.mark.integration


def stagebench(*args: str, home, env_extra=None, timeout=180) -> subprocess.CompletedProcess:
    env = {**os.environ, "STAGEBENCH_HOME": str(home), **(env_extra or {})}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "stagebench", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def test_start_twice_reuses_and_stop_leaves_nothing(tmp_path):
    first = stagebench("broker", "start", "--json", home=tmp_path)
    assert first.returncode == 0, first.stderr
    state = json.loads(first.stdout)
    try:
        again = stagebench("broker", "start", "--json", home=tmp_path)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["pid"] == state["pid"]
        status = stagebench("broker", "status", "--json", home=tmp_path)
        assert status.returncode == 0
        reported = json.loads(status.stdout)
        assert {"bootstrap", "pid", "kafka_version", "log_dir"} <= reported.keys()
        assert reported["kafka_version"].startswith("4.")
        assert (tmp_path / "broker" / "logs" / "server.log").exists()
    finally:
        stopped = stagebench("broker", "stop", home=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert not psutil.pid_exists(state["pid"]) or psutil.Process(state["pid"]).status() == (
        psutil.STATUS_ZOMBIE
    )
    assert not (tmp_path / "broker" / "state.json").exists()
    assert not (tmp_path / "broker" / "data").exists()
    status = stagebench("broker", "status", "--json", home=tmp_path)
    assert status.returncode == 3
    assert json.loads(status.stdout) == {"running": False}


def test_stale_state_is_detected_and_cleaned(tmp_path):
    home = tmp_path / "broker"
    home.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (home / "state.json").write_text(
        json.dumps(
            {
                "bootstrap": "127.0.0.1:1", "pid": dead.pid, "kafka_version": "4.3.1",
                "log_dir": str(home / "logs"), "data_dir": str(home / "data"),
                "home": str(home), "node_id": 1, "started_at": 0.0,
            }
        )
    )  # fmt: skip
    assert EmbeddedBroker(home=home).status() is None
    assert not (home / "state.json").exists()


def test_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BrokerError, match=f"port {port} .* in use"):
            EmbeddedBroker(home=tmp_path, port=port).start()
        result = stagebench("broker", "start", "--port", str(port), home=tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"ERROR: port {port} on 127.0.0.1 is in use; choose another with --port "
        "or omit it to pick a free one"
    ]
