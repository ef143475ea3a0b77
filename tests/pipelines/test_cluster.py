"""A stage on a local Spark standalone cluster gives the same outputs as local mode.

The master and one worker are started from PySpark's own ``spark-class``; the
pipeline command then runs once with ``--master local[2]`` and once against the
cluster, on the same input topics, and both output topics must hold the same values.
"""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ground.contract import FLOW, INPUT_TS_EARLIEST, INPUT_TS_LATEST, SPEED
from ground.kafka.ports import free_port
from ground.kafka.topics import create_topics
from tests.pipelines.test_job_kafka import (
    WAIT_S,
    consume,
    expected_count,
    input_stamps,
    inputs,
    produce,
    read_inputs,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]

STAGE = "tumbling"


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 90) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "a Spark daemon exited while starting"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s")


@pytest.fixture
def standalone_master(tmp_path) -> Iterator[tuple[str, Path]]:
    """(spark://host:port, worker dir) of a fresh master with one 2-core worker."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    port, worker_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "spark-logs"
    logs.mkdir()
    daemons = []
    try:
        master = subprocess.Popen(
            [str(_spark_class()), "org.apache.spark.deploy.master.Master",
             "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port())],
            env=env, stdout=(logs / "master.log").open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        daemons.append(master)
        _wait_for_port(port, master)
        worker = subprocess.Popen(
            [str(_spark_class()), "org.apache.spark.deploy.worker.Worker", master_url,
             "--host", "127.0.0.1", "--port", str(worker_port), "--webui-port",
             str(free_port()), "--cores", "2", "--memory", "2g",
             "--work-dir", str(tmp_path / "work")],
            env=env, stdout=(logs / "worker.log").open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        daemons.append(worker)
        _wait_for_port(worker_port, worker)
        yield master_url, tmp_path / "work"
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()


def _run(kafka_bootstrap, topics, output, master, run_dir, want) -> list[dict]:
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", STAGE,
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", output, "--run-id", "same", "--run-dir", str(run_dir),
        "--bootstrap", kafka_bootstrap, "--master", master, "--shuffle-partitions", "2",
        # the cluster's executors need memory left on a small machine
        "--conf", "spark.executor.memory=1g",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out = consume(kafka_bootstrap, output, want, time.monotonic() + 2 * WAIT_S)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr[-3000:]
    return [value for _, _, value in out]


def test_standalone_cluster_gives_same_outputs_as_local(
    kafka_bootstrap, unique, tmp_path, standalone_master
):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    create_topics(kafka_bootstrap, [f"local-{unique}", f"cluster-{unique}"])
    records = inputs()
    produce(kafka_bootstrap, topics, records)
    want = expected_count(STAGE, records)
    want_in = len(records) + 1  # and the malformed record

    local = _run(kafka_bootstrap, topics, f"local-{unique}", "local[2]", tmp_path / "l", want)
    master_url, work_dir = standalone_master
    cluster = _run(kafka_bootstrap, topics, f"cluster-{unique}", master_url, tmp_path / "c", want)

    def canonical(values: list[dict]) -> list[str]:
        return sorted(repr(sorted(v.items())) for v in values)

    assert len(local) == want
    # both carry the broker's clock: each output its inputs' LogAppendTime
    expected = input_stamps(STAGE, read_inputs(kafka_bootstrap, list(topics.values()), want_in))
    assert all((v[INPUT_TS_LATEST], v[INPUT_TS_EARLIEST]) == expected(v) for v in local)
    # the cluster's worker really ran the executors (one app directory per application)
    assert [p.name for p in work_dir.iterdir() if p.name.startswith("app-")]
    assert canonical(cluster) == canonical(local)
