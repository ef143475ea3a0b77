"""An engine restart on Kafka Streams: the job process killed, its JVM gone with it, the
job restarted with ``--resume`` from its committed offsets and changelogs; the join then
loses no input and writes no wrong value (at-least-once may write a pair twice)."""

import os
import signal
import time

import psutil
import pytest

from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground.contract import OBSERVATION_TS, SECOND_MS
from tests.engines.kafka_streams.test_job_kafka import Job, wait_drained
from tests.engines.spark.test_job_kafka import FLUSH_SECOND, inputs, produce

pytestmark = pytest.mark.integration

JVM_GONE_S = 15.0


def _jvm(job: Job) -> psutil.Process:
    """The job's JVM, its one child."""
    deadline = time.monotonic() + 30
    while not (children := psutil.Process(job.process.pid).children()):
        assert time.monotonic() < deadline, "no JVM"
        time.sleep(0.1)
    return children[0]


def test_a_killed_job_takes_its_jvm_and_resumes_losing_nothing(kafka_bootstrap, tmp_path):
    job = Job(kafka_bootstrap, tmp_path, "join", f"ksr-{int(time.time() * 1000) % 10**9}")
    try:
        job.wait_until_ready(time.monotonic() + 120)
        t0 = int(time.time()) * SECOND_MS
        records = [r for r in inputs(t0) if r[1][OBSERVATION_TS] < t0 + FLUSH_SECOND * SECOND_MS]
        half = len(records) // 2
        produce(kafka_bootstrap, job.topics, records[:half], malformed=False)
        time.sleep(2)  # processed and committed (commit interval 100 ms)

        # the job process alone dies: its JVM sees its stdin close and stops
        jvm = _jvm(job)
        os.kill(job.process.pid, signal.SIGKILL)
        job.process.wait()
        jvm.wait(JVM_GONE_S)

        produce(kafka_bootstrap, job.topics, records[half:], malformed=True)
        restarted = time.monotonic()
        job.process = job.start(resume=True)
        job.wait_until_ready(time.monotonic() + 120)
        ready_s = time.monotonic() - restarted
        wait_drained(job, int(time.time() * 1000), time.monotonic() + 60)
    finally:
        assert job.stop() == 0, job.log()
    print(f"\nrestarted job ready in {ready_s:.1f} s")
    assert ready_s < 30  # static membership: no wait for the dead member's session (45 s)
    run = RunInfo(
        id=job.run_id, stage="join", output_topic=job.output,
        input_topics=tuple(job.topics.values()), engine="kafka-streams",
        bootstrap=kafka_bootstrap,
    )  # fmt: skip
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path / "eval")
    records_found = summary.as_dict()["records"]
    assert records_found["missing"] == 0
    assert records_found["unexpected"] == records_found["wrong_values"] == 0
    assert records_found["input_ts_mismatch"] == 0
