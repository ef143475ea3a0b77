"""Two Kafka Streams JVMs of one application (``instances = 2``) on topics of two
partitions: each runs a task, the job is ready once both are, and the join they write
together is exact."""

import json
import time

import pytest

from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.run_info import RunInfo
from ground import rundir
from ground.contract import SECOND_MS
from tests.engines.kafka_streams.test_job_kafka import END_CUT_S, Job, publish, wait_drained

pytestmark = pytest.mark.integration


def test_two_instances_share_the_partitions_and_the_join_is_exact(kafka_bootstrap, tmp_path):
    job = Job(
        kafka_bootstrap, tmp_path, "join", f"ksi-{int(time.time() * 1000) % 10**9}",
        partitions=2, instances=2,
    )  # fmt: skip
    try:
        job.wait_until_ready(time.monotonic() + 120)
        publish(kafka_bootstrap, [job], int(time.time()) * SECOND_MS)
        wait_drained(job, int(time.time() * 1000), time.monotonic() + 60)
    finally:
        assert job.stop() == 0, job.log()
    tasks = []
    for i in range(2):
        effective = json.loads(
            (job.run_dir / f"instance-{i}.kafka_streams_effective.json").read_text()
        )
        assert effective["streams"]["state.dir"].endswith(f"instance-{i}")
        tasks.append((job.run_dir / f"instance-{i}.{rundir.PROGRESS}").exists())
    assert all(tasks)
    run = RunInfo(
        id=job.run_id, stage="join", output_topic=job.output,
        input_topics=tuple(job.topics.values()), engine="kafka-streams",
        bootstrap=kafka_bootstrap,
    )  # fmt: skip
    found = evaluate(
        kafka_bootstrap, run, EvaluatorConfig(warmup_s=0, end_cut_s=END_CUT_S), tmp_path / "eval"
    )
    records_found = found.as_dict()["records"]
    assert records_found["outputs"] == records_found["expected"] > 0
    assert records_found["missing"] == records_found["duplicates"] == 0
    assert records_found["unexpected"] == records_found["wrong_values"] == 0
