"""An engine restart on Flink against the real broker: the join's job is killed with its
whole process group (SIGKILL, as the engine-restart fault does) halfway through its
inputs and started again with ``--resume``; it continues from its newest checkpoint,
and no output is lost (the outputs since that checkpoint may be written twice)."""

import collections
import json
import os
import signal
import time

import pytest

from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground import rundir
from ground.contract import SPEED
from ground.kafka.topics import create_topics
from stagebench.run.job import drained, write_pipeline_config
from tests.engines.flink.test_job_kafka import DRAIN_S, IDLE_MS, FlinkJob, spawn, wait_ready
from tests.engines.flink.test_statements import flink_config
from tests.engines.spark.test_job_kafka import _second_of, inputs, produce

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_killed_join_resumes_from_its_checkpoint_and_loses_nothing(
    kafka_bootstrap, tmp_path, unique
):
    topics = {SPEED: f"speed-{unique}", "flow": f"flow-{unique}"}
    output = f"out-{unique}"
    create_topics(kafka_bootstrap, [*topics.values(), output])
    run_dir = tmp_path / "join"
    config = flink_config(
        "join", kafka_bootstrap, run_id=unique, output_topic=output,
        speed_topic=topics[SPEED], flow_topic=topics["flow"],
        checkpoint_dir=str(run_dir / rundir.CHECKPOINT),
        settings={"idle_timeout_ms": IDLE_MS, "checkpoint_interval_ms": 500},
    )  # fmt: skip
    path = write_pipeline_config(run_dir, config)
    t0 = int(time.time()) * 1000
    by_second = collections.defaultdict(list)
    for kind, msg in inputs(t0):
        by_second[_second_of(msg, t0)].append((kind, msg))
    seconds = sorted(by_second)
    job = FlinkJob("join", run_dir, output, spawn(path, run_dir, resume=False))
    try:
        wait_ready(job)
        for second in seconds[:3]:
            produce(kafka_bootstrap, topics, by_second[second], malformed=False)
            time.sleep(1.0)
        time.sleep(2.0)  # a checkpoint after them
        os.killpg(job.proc.pid, signal.SIGKILL)
        job.proc.wait()
        for second in seconds[3:]:  # appended while the job is down
            produce(kafka_bootstrap, topics, by_second[second], malformed=False)
        job = FlinkJob("join", run_dir, output, spawn(path, run_dir, resume=True))
        wait_ready(job)
        since = int(time.time() * 1000)
        deadline = time.monotonic() + DRAIN_S
        while not drained(run_dir / rundir.PROGRESS, since):
            job.check()
            assert time.monotonic() < deadline, f"not drained in {DRAIN_S} s"
            time.sleep(0.2)
        time.sleep(2)
        job.proc.send_signal(signal.SIGTERM)
        assert job.proc.wait(60) == 0
    finally:
        if job.proc.poll() is None:
            os.killpg(job.proc.pid, signal.SIGKILL)
            job.proc.wait()
    assert "resuming from" in (run_dir / rundir.PIPELINE_LOG).read_text()
    run = RunInfo(
        id=unique, stage="join", engine="flink", output_topic=output,
        input_topics=tuple(topics.values()),
        config=json.loads((run_dir / rundir.PIPELINE).read_text()),
    )  # fmt: skip
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path / "eval")
    records = summary.as_dict()["records"]
    assert records["expected"] > 0 and records["missing"] == 0, records
    assert records["unexpected"] == 0 and records["input_ts_mismatch"] == 0, records
