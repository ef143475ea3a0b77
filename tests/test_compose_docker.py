"""docker-compose.yml for real, as a user runs it: ``docker compose up -d --wait``, then
stagebench against the published ports, then ``docker compose down -v``.

The single broker and the cluster are each one compose project (a unique ``-p``) for
the module's runs on it, brought down in ``finally`` with its volumes, so nothing of
it outlives a failure. The image is ``STAGEBENCH_KAFKA_IMAGE``
(default the official one), as for the user.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from ground import envvars
from tests.kafka_docker import COMPOSE, kafka_image
from tests.stagebench.run.test_runs import SHORT, _job_pids, assert_complete_run, stagebench

pytestmark = [pytest.mark.docker, pytest.mark.integration, pytest.mark.slow]

SINGLE = "127.0.0.1:9092"
CLUSTER = "127.0.0.1:19092,127.0.0.1:29092,127.0.0.1:39092"
CLUSTER_RATE = 100
"""Three brokers, Spark and the publisher on two cores: at 400 msg/s the box is saturated
and the brokers append a fifth less than offered; a quarter of it keeps this a test of
the cluster, not of the machine."""


def compose(project: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["docker", "compose", "-f", str(COMPOSE), "-p", project, *args],
        capture_output=True, text=True, timeout=timeout, check=False,
        env={**os.environ, envvars.KAFKA_IMAGE: kafka_image()},
    )  # fmt: skip


def _left(project: str) -> list[str]:
    """Containers and volumes of compose project ``project`` still on this machine."""
    label = f"label=com.docker.compose.project={project}"
    found = []
    for kind in ("container", "volume"):
        listed = subprocess.run(
            ["docker", kind, "ls", *(["--all"] if kind == "container" else []),
             "--quiet", "--filter", label],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        found += [f"{kind} {name}" for name in listed.stdout.split()]
    return found


@contextlib.contextmanager
def compose_project() -> Iterator[str]:
    """A fresh compose project name; the project is brought down (volumes too) afterwards."""
    if shutil.which("docker") is None or compose("probe", "version").returncode != 0:
        pytest.fail("Docker answers but `docker compose` (v2) does not: install Compose v2")
    name = f"stagebench-test-{uuid.uuid4().hex[:8]}"
    try:
        yield name
    finally:
        down = compose(name, "--profile", "cluster", "down", "-v", "--remove-orphans")
        assert down.returncode == 0, down.stderr
        assert _left(name) == []


@pytest.fixture(scope="module")
def single(docker_kafka_image) -> Iterator[str]:
    """The single broker, up for the module's runs on it; its project's name."""
    with compose_project() as project:
        up(project)
        yield project


@pytest.fixture(scope="module")
def cluster(docker_kafka_image) -> Iterator[str]:
    """The three-broker cluster, up for the module's runs on it (the leader change last:
    it stops a node); its project's name."""
    with compose_project() as project:
        up(project, "kafka-1", "kafka-2", "kafka-3", profile="cluster")
        yield project


def up(project: str, *services: str, profile: str | None = None) -> float:
    """``docker compose up -d --wait``; the seconds it took."""
    started = time.monotonic()
    result = compose(project, *(["--profile", profile] if profile else []),
                     "up", "-d", "--wait", *services)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return time.monotonic() - started


def assert_log_append_time(bootstrap: str, topics: list[str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resources = [ConfigResource(ConfigResource.Type.TOPIC, name) for name in topics]
    for resource, future in admin.describe_configs(resources).items():
        configs = future.result(timeout=30)
        assert configs["message.timestamp.type"].value == "LogAppendTime", resource


def assert_broker_is_the_container(summary: dict, containers: int) -> None:
    """The broker's processes were sampled as the broker, not as other processes."""
    broker = summary["machine"]["broker"]
    assert broker["kind"] == "container", broker
    assert len(broker["containers"]) == containers, broker
    assert broker["cpu_percent_mean"] > 0 and broker["rss_mb_max"] > 100, broker
    assert summary["metadata"]["resources"]["broker"]["samples"] > 10
    assert not [w for w in summary["warnings"] if "other processes used" in w], summary["warnings"]


@pytest.mark.spark
def test_compose_single_broker_runs_a_stage(single, tmp_path):
    # ingest: the join runs on compose in the cluster's test below
    stage = "ingest"
    result = stagebench(
        "run", "--stage", stage, *SHORT, "--bootstrap", SINGLE, "--results", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next(tmp_path.glob(f"*-{stage}-*"))
    summary = assert_complete_run(run_dir, stage, SINGLE)
    run = json.loads((run_dir / "run.json").read_text())
    assert_log_append_time(SINGLE, [*run["input_topics"], run["output_topic"]])
    assert_broker_is_the_container(summary, containers=1)


@pytest.mark.spark
def test_compose_cluster_pins_leaders_and_runs_the_join(cluster, tmp_path):
    created = stagebench("topics", "create", "--leader", "2", "--bootstrap", CLUSTER,
                         "--run-id", "pinned", timeout=120)  # fmt: skip
    assert created.returncode == 0, created.stderr
    checked = stagebench("topics", "check", "--leader", "2", "--bootstrap", CLUSTER,
                         "--run-id", "pinned", timeout=120)  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.count("LogAppendTime, leaders [2]") == 3, checked.stdout

    result = stagebench(
        "run", "--stage", "join", *SHORT, "--rate", str(CLUSTER_RATE), "--leader", "2",
        "--bootstrap", CLUSTER, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next(tmp_path.glob("*-join-*"))
    summary = assert_complete_run(run_dir, "join", CLUSTER, rate=None)
    run = json.loads((run_dir / "run.json").read_text())
    topics = [*run["input_topics"], run["output_topic"]]
    leaders = run["metadata"]["leaders"]
    assert leaders["before"] == leaders["after"] == {name: [2] for name in topics}
    metadata = AdminClient({"bootstrap.servers": CLUSTER}).list_topics(timeout=10)
    for name in topics:  # led by 2, replicated on all three
        assert metadata.topics[name].partitions[0].replicas[0] == 2
        assert len(metadata.topics[name].partitions[0].replicas) == 3
    assert summary["metadata"]["resources"]["broker"]["samples"] > 10
    broker = summary["machine"]["broker"]
    assert broker["kind"] == "container" and len(broker["containers"]) == 3, broker


def test_compose_cluster_leader_change_stops_the_run(cluster, tmp_path):
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stagebench", "run", "--stage", "floor", "--duration", "60",
         "--warmup", "5", "--leader", "3", "--bootstrap", CLUSTER, "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(results.glob("*/pipeline.ready")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the job never became ready"
            time.sleep(0.5)
        time.sleep(8)  # into the measured period
        stopped = compose(cluster, "stop", "kafka-3")
        assert stopped.returncode == 0, stopped.stderr
        _, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr[-3000:]
    error = stderr.strip().splitlines()[-1]
    assert error.startswith("ERROR: partition leaders changed during the run ("), error
    assert "[0]: 3 → " in error and "nothing is measured" in error
    run_dir = next(results.iterdir())
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "failed" and "leaders changed" in status["error"]
    assert not (run_dir / "summary.json").exists()
    assert not _job_pids(results)
