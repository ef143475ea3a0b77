"""Two Kafka Streams JVMs of one application (``instances = 2``) on topics of two
partitions: each runs a task, the job is ready once both are; one killed (the
instance-loss fault), the other takes its task over after its session, and the join
they write together loses nothing and writes no wrong value."""

import json
import signal
import time

import psutil
import pytest

from engines.kafka_streams.instances import pick_instance
from engines.kafka_streams.settings import LOST_INSTANCE_MS
from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground import rundir
from ground.contract import SECOND_MS
from tests.engines.kafka_streams.test_job_kafka import END_CUT_S, Job, publish, wait_drained

pytestmark = pytest.mark.integration


def _jvms(job: Job) -> set[int]:
    return {child.pid for child in psutil.Process(job.process.pid).children()}


def test_two_instances_share_the_partitions_and_survive_losing_one(kafka_bootstrap, tmp_path):
    job = Job(
        kafka_bootstrap, tmp_path, "join", f"ksi-{int(time.time() * 1000) % 10**9}",
        partitions=2, instances=2,
    )  # fmt: skip
    try:
        job.wait_until_ready(time.monotonic() + 120)
        before = _jvms(job)
        killed = pick_instance(job.process.pid, None)
        psutil.Process(killed).send_signal(signal.SIGKILL)
        assert killed in before
        deadline = time.monotonic() + 10
        while killed in _jvms(job):
            assert time.monotonic() < deadline, "the killed instance is still there"
            time.sleep(0.2)
        assert job.process.poll() is None  # the job goes on with one instance
        time.sleep(LOST_INSTANCE_MS / 1000 + 6)  # its session, then the rebalance
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
    assert records_found["missing"] == 0
    assert records_found["unexpected"] == records_found["wrong_values"] == 0
