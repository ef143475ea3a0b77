"""A run on a Flink session cluster (``--flink-cluster``): the job runs on the cluster,
not in a local mini-cluster, its outputs are exact, and the stop leaves the cluster
without it."""

import json

import pytest

from tests.engines.flink.session_cluster import rest, session_cluster
from tests.stagebench.run.test_runs import SHORT, assert_complete_run, stagebench

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_run_on_a_session_cluster_is_exact_and_leaves_it_without_its_job(
    kafka_bootstrap, tmp_path
):
    logs = tmp_path / "cluster"
    logs.mkdir()
    with session_cluster(logs) as address:
        done = stagebench(
            "run", "--engine", "flink", "--stage", "join", "--flink-cluster", address, *SHORT,
            "--bootstrap", kafka_bootstrap, "--results", str(tmp_path / "results"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        run_dir = next((tmp_path / "results").glob("*-join-*"))
        summary = assert_complete_run(run_dir, "join", kafka_bootstrap)
        jobs = rest(address, "/jobs/overview")["jobs"]
    run_id = summary["run"]["id"]
    assert [(job["name"], job["state"]) for job in jobs] == [
        (f"stagebench-join-{run_id}", "CANCELED")
    ]
    settings = json.loads((run_dir / "config.json").read_text())["engine.flink"]
    assert settings["cluster"] == address
    assert f"session cluster {address}" in done.stderr
