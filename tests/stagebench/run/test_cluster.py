"""A real three-broker cluster, embedded: a leader change mid-run must stop the run
rather than mix two broker clocks (the runner's to notice: its run is the floor's, with
no JVM), and a leader outside the cluster is refused. A run with leaders pinned to one
broker runs on the compose cluster (tests/test_compose_docker.py)."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.stagebench.run.test_runs import _job_pids, stagebench

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_a_leader_change_mid_run_stops_the_run_and_says_so(kafka_cluster, tmp_path):
    bootstrap = kafka_cluster.status().bootstrap
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stagebench", "run", "--stage", "floor", "--duration", "60",
         "--warmup", "5", "--leader", "3", "--bootstrap", bootstrap, "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(results.glob("*/pipeline.ready")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the job never became ready"
            time.sleep(0.5)
        time.sleep(8)  # into the measured period
        kafka_cluster.stop_node(3)
        _, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
        kafka_cluster.start_node(3)
    assert proc.returncode == 1, stderr[-3000:]
    error = stderr.strip().splitlines()[-1]
    assert error.startswith("ERROR: partition leaders changed during the run ("), error
    assert "[0]: 3 → " in error and "nothing is measured" in error
    run_dir = next(results.iterdir())
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "failed" and "leaders changed" in status["error"]
    assert not (run_dir / "summary.json").exists()  # nothing reported as if measured
    assert not _job_pids(results)


def test_run_options_for_clusters_are_validated(tmp_path):
    result = stagebench("run", "--replication", "0", "--results", str(tmp_path), timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == "ERROR: [run] replication must be >= 1"


def test_a_run_refuses_a_leader_outside_the_cluster(kafka_cluster, tmp_path):
    result = stagebench(
        "run", "--stage", "ingest", "--leader", "7",
        "--bootstrap", kafka_cluster.status().bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ERROR: broker 7 is not in the cluster (brokers: [1, 2, 3])"
    )
    assert not list(Path(tmp_path).glob("*/pipeline.ready"))
