"""The embedded broker's lifecycle, through the API and the CLI."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest
from confluent_kafka.admin import AdminClient

from ground.errors import BrokerError
from ground.kafka.broker import EmbeddedBroker
from tests import leaks

pytestmark = pytest.mark.integration


def stagebench(*args: str, home, env_extra=None, timeout=180) -> subprocess.CompletedProcess:
    env = {**os.environ, "STAGEBENCH_HOME": str(home), **(env_extra or {})}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "stagebench", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("brokers", [1, 3])
def test_start_twice_reuses_and_stop_leaves_nothing(tmp_path, brokers):
    began = time.monotonic()
    first = stagebench("broker", "start", "--brokers", str(brokers), "--json", home=tmp_path)
    assert first.returncode == 0, first.stderr
    print(f"{brokers} broker(s) started in {time.monotonic() - began:.1f} s")
    state = json.loads(first.stdout)
    pids = [n["pid"] for n in state["nodes"]]
    try:
        assert [n["node_id"] for n in state["nodes"]] == list(range(1, brokers + 1))
        assert len(set(pids)) == brokers and all(n["running"] for n in state["nodes"])
        assert state["bootstrap"] == ",".join(n["bootstrap"] for n in state["nodes"])
        # each node's client and controller listeners, on the loopback interface only
        sockets = leaks.listening(pids)
        assert len(sockets) == 2 * brokers and not leaks.beyond_loopback(sockets), sockets
        # one cluster: every node sees every broker
        for node in state["nodes"]:
            seen = AdminClient({"bootstrap.servers": node["bootstrap"]}).list_topics(timeout=10)
            assert sorted(seen.brokers) == list(range(1, brokers + 1))
        again = stagebench("broker", "start", "--brokers", str(brokers), "--json", home=tmp_path)
        assert again.returncode == 0, again.stderr
        assert [n["pid"] for n in json.loads(again.stdout)["nodes"]] == pids
        other = 2 if brokers == 1 else 1
        refused = stagebench("broker", "start", "--brokers", str(other), home=tmp_path)
        assert refused.returncode == 1
        assert f"stop it first to start {other}" in refused.stderr
        status = stagebench("broker", "status", "--json", home=tmp_path)
        assert status.returncode == 0
        reported = json.loads(status.stdout)
        assert {"bootstrap", "kafka_version", "nodes"} <= reported.keys()
        assert reported["kafka_version"].startswith("4.")
        assert [n["pid"] for n in reported["nodes"]] == pids
        for n in range(1, brokers + 1):
            assert (tmp_path / "broker" / f"node-{n}" / "logs" / "server.log").exists()
        text = stagebench("broker", "status", home=tmp_path).stdout
        assert all(str(pid) in text for pid in pids)
    finally:
        stopped = stagebench("broker", "stop", home=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert all(_gone(pid) for pid in pids)
    assert not (tmp_path / "broker" / "state.json").exists()
    assert not list((tmp_path / "broker").glob("node-*"))
    status = stagebench("broker", "status", "--json", home=tmp_path)
    assert status.returncode == 3
    assert json.loads(status.stdout) == {"running": False}


def _broker_jvms(home) -> list[psutil.Process]:
    """The broker JVMs whose command line names a node under ``home``."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if "kafka.Kafka" in cmdline and str(home) in cmdline:
            found.append(proc)
    return found


@pytest.mark.parametrize("brokers", [1, 3])
def test_an_interrupted_start_leaves_no_broker_running(tmp_path, brokers):
    """Ctrl-C once the first node's JVM runs: during the wait for one broker, during the
    second node's format for three. Every node launched is killed before the command exits."""
    env = {**os.environ, "STAGEBENCH_HOME": str(tmp_path)}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    start = subprocess.Popen(
        [sys.executable, "-m", "stagebench", "broker", "start", "--brokers", str(brokers)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not _broker_jvms(tmp_path) and start.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _broker_jvms(tmp_path), "no broker JVM was launched"
    start.send_signal(signal.SIGINT)
    _, err = start.communicate(timeout=60)
    assert start.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert not [p for p in _broker_jvms(tmp_path) if p.status() != psutil.STATUS_ZOMBIE]
    assert not (tmp_path / "broker" / "state.json").exists()
    assert stagebench("broker", "status", home=tmp_path).returncode == 3


def test_stop_leaves_alone_a_process_that_took_a_recorded_pid(tmp_path):
    """A stale state whose pid now belongs to another Kafka (another home, a container):
    not this home's node, so not stopped, and the stale state is cleaned."""
    home = tmp_path / "broker"
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "kafka.Kafka",
         str(tmp_path / "elsewhere" / "server.properties")]
    )  # fmt: skip
    try:
        node = {
            "node_id": 1, "pid": other.pid, "bootstrap": "127.0.0.1:1", "controller_port": 2,
            "log_dir": str(home / "node-1" / "logs"), "data_dir": str(home / "node-1" / "data"),
        }  # fmt: skip
        home.mkdir()
        (home / "state.json").write_text(
            json.dumps({"bootstrap": "127.0.0.1:1", "kafka_version": "4.3.1", "home": str(home),
                        "started_at": 0.0, "nodes": [node]})
        )  # fmt: skip
        assert EmbeddedBroker(home=home).stop() is False
        assert other.poll() is None
        assert not (home / "state.json").exists()
    finally:
        other.kill()
        other.wait()


def test_stale_state_is_detected_and_cleaned(tmp_path):
    home = tmp_path / "broker"
    (home / "node-1" / "data").mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    node = {
        "node_id": 1, "pid": dead.pid, "bootstrap": "127.0.0.1:1", "controller_port": 2,
        "log_dir": str(home / "node-1" / "logs"), "data_dir": str(home / "node-1" / "data"),
    }  # fmt: skip
    (home / "state.json").write_text(
        json.dumps(
            {"bootstrap": "127.0.0.1:1", "kafka_version": "4.3.1", "home": str(home),
             "started_at": 0.0, "nodes": [node]}
        )
    )  # fmt: skip
    assert EmbeddedBroker(home=home).status() is None
    assert not (home / "state.json").exists()
    assert not (home / "node-1").exists()


def test_a_cluster_size_out_of_range_is_a_clear_error(tmp_path):
    result = stagebench("broker", "start", "--brokers", "9", home=tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == ["ERROR: brokers must be 1 to 5, got 9"]


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


@pytest.mark.parametrize("kill", [False, True])
def test_a_node_another_process_started_stops_and_start_brings_it_back(tmp_path, kill):
    """The node is this test's child, stopped by another process (as a run stops a broker
    a fixture started): it stays a zombie until this process reaps it, and stopping must
    not take it for alive (a SIGKILL timed out, a SIGTERM waited 30 s and killed it)."""
    broker = EmbeddedBroker(home=tmp_path, heap="384M")
    state = broker.start()
    stop = (
        "import pathlib; from ground.kafka.broker import EmbeddedBroker; "
        f"EmbeddedBroker(home=pathlib.Path({str(tmp_path)!r})).stop_node(1, kill={kill})"
    )
    try:
        began = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-c", stop], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        assert "did not stop" not in result.stderr
        print(f"stopped (kill={kill}) in {time.monotonic() - began:.1f} s")
        assert not broker.status().node(1).running
        # the stopped node is started again by the next start (a run killed mid-outage),
        # with the heap it had, whoever starts it
        restarted = EmbeddedBroker(home=tmp_path).start().node(1)
        assert restarted.running and restarted.pid != state.node(1).pid
        assert "-Xmx384M" in psutil.Process(restarted.pid).cmdline()
        AdminClient({"bootstrap.servers": state.bootstrap}).list_topics(timeout=10)
    finally:
        broker.stop()
