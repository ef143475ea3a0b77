"""Every Flink stage against the real broker, checked exact by the evaluator.

One job per stage (``python -m engines.flink.job``, as a run starts it) reads the same
input topics; once all are ready the inputs are published one second per wall-clock
second, then a flush second that moves the watermark past every input second, and one
input of each malformed kind (:mod:`ground.malformed`). Each job's output topic is then
evaluated as a run of its stage: every output the inputs imply, once, with the values
and the broker timestamps they imply. The jobs start side by side to share the machine's
JVM start-up; the Flink runtime is installed once, into the user cache. Every job is
given a secured cluster's properties on PLAINTEXT (``kafka_canary``), whose password no
file of theirs may hold; a local mini-cluster listens on the loopback interface only.
"""

import concurrent.futures
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from confluent_kafka import Producer

from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground import malformed, rundir
from ground.contract import SPEED
from ground.kafka import MAX_MESSAGE_BYTES
from ground.kafka.topics import create_topics
from ground.paths import cache_dir
from publisher.faulty import malformed as malformed_value
from stagebench.run.job import drained, write_pipeline_config
from tests import leaks
from tests.engines.closing import closed_by, closing, out_of_turn
from tests.engines.flink.test_statements import flink_config
from tests.engines.spark.test_job_kafka import FLUSH_SECOND, inputs, publish_while_running

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STAGES = ("ingest", "parse", "join", "tumbling", "tumbling-union", "sliding")
READY_S = 240
IDLE_MS = 30_000
"""Longer than the test: the inputs come a second at a time, and a partition idle for
the default second would be left out of the watermark, which the other topic's next
second could then move past its first records (late: the join drops them)."""
DRAIN_S = 60


@dataclass
class FlinkJob:
    stage: str
    run_dir: Path
    output: str
    proc: subprocess.Popen

    def check(self) -> None:
        if self.proc.poll() is not None:
            log = (self.run_dir / rundir.PIPELINE_LOG).read_text()[-3000:]
            raise AssertionError(f"the {self.stage} job exited ({self.proc.returncode}): {log}")


def start(bootstrap: str, home: Path, stage: str, topics: dict[str, str], run_id: str) -> FlinkJob:
    output = f"out-{stage}-{run_id}"
    create_topics(bootstrap, [output])
    run_dir = home / stage
    config = flink_config(
        stage, bootstrap, run_id=f"{stage}-{run_id}", output_topic=output,
        speed_topic=topics[SPEED], flow_topic=topics["flow"],
        checkpoint_dir=str(run_dir / rundir.CHECKPOINT), settings={"idle_timeout_ms": IDLE_MS},
    )  # fmt: skip
    path = write_pipeline_config(run_dir, config)
    return FlinkJob(stage, run_dir, output, spawn(path, run_dir, resume=False))


def spawn(path: Path, run_dir: Path, resume: bool) -> subprocess.Popen:
    """The job process, as a run starts it (its own process group, a pipe as stdin)."""
    with open(run_dir / rundir.PIPELINE_LOG, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "engines.flink.job", "--config", str(path),
             "--run-dir", str(run_dir), "--parent-watch", *(["--resume"] if resume else [])],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip


def wait_ready(job: FlinkJob) -> None:
    deadline = time.monotonic() + READY_S
    while not (job.run_dir / rundir.READY).exists():
        job.check()
        assert time.monotonic() < deadline, f"{job.stage}: not ready within {READY_S} s"
        time.sleep(0.5)


def stop(job: FlinkJob) -> list[psutil.Process]:
    """SIGTERM as a run stops its job; the processes it had."""
    family = psutil.Process(job.proc.pid).children(recursive=True)
    job.proc.send_signal(signal.SIGTERM)
    assert job.proc.wait(60) == 0, (job.run_dir / rundir.PIPELINE_LOG).read_text()[-3000:]
    return family


def faulty_inputs(records: list[tuple[str, dict]]) -> list[bytes]:
    """One malformed input of each kind, made from a valid message."""
    message = records[0][1]
    return [malformed_value(kind, 0, message) for kind in malformed.KINDS]


def integer_twins(records: list[tuple[str, dict]]) -> dict[str, bytes]:
    """A valid speed and flow of a location of their own whose floats are JSON integers,
    as a publisher may write them, by kind."""
    _, message = records[0]
    twins = {}
    for kind, value in ((SPEED, 80), ("flow", 12)):
        twin = {k: v for k, v in message.items() if k not in (SPEED, "flow")}
        twins[kind] = json.dumps({**twin, "location_id": "L98", "lane": 1, "num_lanes": 1,
                                  "accuracy": 95, kind: value}).encode()  # fmt: skip
    return twins


@pytest.fixture(scope="module")
def runs(kafka_bootstrap, tmp_path_factory, kafka_canary):
    """The jobs of every stage on the same inputs, drained and stopped; their processes'
    listening sockets once all run. Each job is given a secured cluster's properties
    (``kafka_canary``) that PLAINTEXT leaves unused."""
    began = leaks.now()
    home = tmp_path_factory.mktemp("flink")
    run_id = home.name[-8:].replace("_", "")
    topics = {SPEED: f"speed-{run_id}", "flow": f"flow-{run_id}"}
    create_topics(kafka_bootstrap, list(topics.values()))
    t0 = int(time.time()) * 1000
    records = inputs(t0)
    with concurrent.futures.ThreadPoolExecutor(len(STAGES)) as pool:
        jobs = list(pool.map(lambda s: start(kafka_bootstrap, home, s, topics, run_id), STAGES))
    try:
        started = time.monotonic()
        for job in jobs:
            wait_ready(job)
        ready_s = time.monotonic() - started
        sockets = leaks.listening([job.proc.pid for job in jobs])
        producer = Producer(
            {"bootstrap.servers": kafka_bootstrap, "message.max.bytes": MAX_MESSAGE_BYTES}
        )
        for value in faulty_inputs(records):
            producer.produce(topics[SPEED], value=value)
        for kind, value in integer_twins(records).items():
            producer.produce(topics[kind], value=value)
        assert producer.flush(30) == 0
        publish_while_running(kafka_bootstrap, topics, records, t0, lambda: None)
        since = int(time.time() * 1000)
        for job in jobs:
            deadline = time.monotonic() + DRAIN_S
            while not drained(job.run_dir / rundir.PROGRESS, since):
                job.check()
                assert time.monotonic() < deadline, f"{job.stage}: not drained in {DRAIN_S} s"
                time.sleep(0.2)
        time.sleep(2)  # the last outputs after the last input read
        families = {job.stage: stop(job) for job in jobs}
    finally:
        for job in jobs:
            if job.proc.poll() is None:
                job.proc.kill()
                job.proc.wait()
    yield {"jobs": {j.stage: j for j in jobs}, "topics": topics, "ready_s": ready_s,
           "families": families, "home": home, "sockets": sockets, "began": began}  # fmt: skip


def run_info(runs: dict, stage: str) -> RunInfo:
    """The run ``stage``'s job is, for the evaluator (its pipeline config in ``config``)."""
    job = runs["jobs"][stage]
    config = json.loads((job.run_dir / rundir.PIPELINE).read_text())
    return RunInfo(
        id=config["pipeline"]["run_id"], stage=stage, engine="flink", output_topic=job.output,
        input_topics=tuple(runs["topics"].values()), config=config,
    )  # fmt: skip


@pytest.mark.parametrize("stage", STAGES)
def test_stage_outputs_are_exact(runs, kafka_bootstrap, stage, tmp_path):
    run = run_info(runs, stage)
    # the flush second's windows never close (no later input): its inputs, the last
    # second's, are left out of what is expected
    evaluator = EvaluatorConfig(warmup_s=0, end_cut_s=0.5)
    summary = evaluate(kafka_bootstrap, run, evaluator, tmp_path).as_dict()
    records = summary["records"]
    assert records["outputs"] > 0
    assert records["missing"] == 0, records
    assert records["duplicates"] == 0, records
    assert records["unexpected"] == 0, records
    assert records["input_ts_mismatch"] == 0, records
    assert records.get("wrong_values") in (0, None), records
    if stage != "ingest":  # ingest copies every input, malformed ones too
        assert records["malformed_inputs"] == len(malformed.KINDS) + 1, records


@pytest.mark.parametrize("stage", ("tumbling", "sliding"))
def test_a_window_goes_out_with_the_input_that_closes_it(runs, kafka_bootstrap, stage):
    """The flush second, the last input, moves the watermark (the least of the topics'
    clocks) the delay past the last seconds' windows: each is written, after it. The
    sliding window goes out with the second that ends it (tests/engines/closing.py)."""
    run = run_info(runs, stage)
    windows = closing(kafka_bootstrap, run, run.config["pipeline"]["watermark_delay_ms"], "least")
    flushed = closed_by(windows, FLUSH_SECOND)
    assert flushed and out_of_turn(flushed) == [], flushed
    assert all(w.closed <= w.written for w in windows), windows


def test_no_process_outlives_the_stop(runs):
    """The runner and Flink's JVM end with the job."""
    for stage, family in runs["families"].items():
        assert family, f"{stage}: the job started no runner"
        _, alive = psutil.wait_procs(family, timeout=10)
        assert not alive, f"{stage}: left running: {[p.pid for p in alive]}"


def test_the_job_writes_its_statements_and_flink_log(runs):
    """Linger 0 and the idle timeout reach the job as it runs them."""
    plan = json.loads((runs["jobs"]["tumbling"].run_dir / "flink_statements.json").read_text())
    assert plan["settings"]["table.exec.source.idle-timeout"] == f"{IDLE_MS} ms"
    assert "'properties.linger.ms' = '0'" in plan["ddl"][-1]
    assert list((runs["jobs"]["tumbling"].run_dir / "flink_log").glob("*.log"))


def test_a_local_mini_cluster_listens_on_loopback_only(runs):
    """Flink's REST endpoint, blob server and task manager, and PyFlink's gateway."""
    assert runs["sockets"], "no listening socket seen"
    assert not leaks.beyond_loopback(runs["sockets"])


def test_no_file_holds_the_password(runs, kafka_canary):
    """Not the statements, Flink's logs, a checkpoint nor the caches."""
    written = leaks.files_holding(kafka_canary, runs["home"], cache_dir(), since=runs["began"])
    assert not written
