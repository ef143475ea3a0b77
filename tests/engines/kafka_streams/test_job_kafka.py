"""Every Kafka Streams stage against the real broker, checked exact by the evaluator.

The six stages run side by side, each a job process (``python -m
engines.kafka_streams.job``, as a run starts it) on topics of its own, sharing one compile
of the Java job. The same input goes to each once every job is ready, one second of it per
wall-clock second, then two "flush" seconds far later in event time: the first closes every
window before it, the second, published once every job has drained, the first's. The
evaluator then reads each
stage's topics as it reads a run's: every output the input implies is there, once, with
the values and the broker timestamps of its inputs; the flush seconds are cut off the
measured period (``end_cut_s``), as a run's last seconds are. Every job is given a secured
cluster's properties on PLAINTEXT (``kafka_canary``), whose password no file of theirs may
hold, and listens on the loopback interface only, if at all.
"""

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.config import PipelineConfig
from engines.kafka_streams import build
from engines.kafka_streams.job import EFFECTIVE_FILE
from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground import rundir
from ground.contract import FLOW, KINDS, OBSERVATION_TS, SCHEDULED_TS, SECOND_MS, SPEED
from ground.kafka.topics import create_topics
from ground.paths import cache_dir
from stagebench.run.job import drained, write_pipeline_config
from tests import leaks
from tests.engines.closing import closed_by, closing, out_of_turn
from tests.engines.spark.test_job_kafka import FLUSH_SECOND, inputs, produce
from tests.engines.spark.test_transforms import T0, message

pytestmark = pytest.mark.integration

CASES = (
    ("ingest", "builtin"), ("parse", "builtin"), ("join", "builtin"), ("tumbling", "builtin"),
    ("sliding", "builtin"), ("tumbling-union", "builtin"), ("tumbling", "custom"),
    ("sliding", "custom"),
)  # fmt: skip
"""(stage, impl): every stage, and the custom windows."""
WAIT_S = 120
SECOND_FLUSH = FLUSH_SECOND + 8
END_CUT_S = 1.5
"""Cuts the two flush seconds (published a second apart, after the last second) off the
measured period, and nothing before them."""


class Stages(dict[tuple[str, str], tuple["Job", dict]]):
    """Each case's job and its evaluation, by (stage, impl); where the jobs ran, from when,
    and the listening sockets they had."""

    def __init__(self, home: Path, began: float, sockets: list[leaks.Listener]) -> None:
        super().__init__()
        self.home, self.began, self.sockets = home, began, sockets


class Job:
    """One stage's job process, its topics and run directory."""

    def __init__(
        self, bootstrap: str, home: Path, stage: str, run_id: str, impl: str = "builtin",
        partitions: int = 1, **settings: object,
    ) -> None:  # fmt: skip
        self.stage, self.impl, self.run_id = stage, impl, run_id
        self.topics = {SPEED: f"speed-{run_id}", FLOW: f"flow-{run_id}"}
        self.output = f"out-{run_id}"
        create_topics(bootstrap, [*self.topics.values(), self.output], partitions=partitions)
        self.run_dir = home / f"{stage}-{impl}"
        self.config = PipelineConfig(
            stage=stage, output_topic=self.output, run_id=run_id, bootstrap=bootstrap,
            checkpoint_dir=str(home / f"{stage}-{impl}-state"), engine="kafka-streams", impl=impl,
            settings=settings,
            speed_topic=self.topics[SPEED], flow_topic=self.topics[FLOW],
        )  # fmt: skip
        write_pipeline_config(self.run_dir, self.config)
        self.process = self.start()

    def start(self, resume: bool = False) -> subprocess.Popen:
        """The job process, as a run starts it (``resume``: after an engine restart)."""
        (self.run_dir / rundir.READY).unlink(missing_ok=True)
        with (self.run_dir / rundir.PIPELINE_LOG).open("ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "engines.kafka_streams.job",
                 "--config", str(self.run_dir / rundir.PIPELINE), "--run-dir", str(self.run_dir),
                 "--parent-watch", *(["--resume"] if resume else [])],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def wait_until_ready(self, deadline: float) -> None:
        while not (self.run_dir / rundir.READY).exists():
            assert self.process.poll() is None, self.log()
            assert time.monotonic() < deadline, f"{self.stage} was not ready: {self.log()}"
            time.sleep(0.2)

    def stop(self) -> int:
        """SIGTERM, as a run stops its job; the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def log(self) -> str:
        """The end of the job's log."""
        lines = (self.run_dir / rundir.PIPELINE_LOG).read_text(errors="replace").splitlines()
        return "\n".join(line for line in lines if "WARN" in line or "ERROR" in line)[-3000:]


def flush(second: int, t0: int) -> list[tuple[str, dict]]:
    """Both lanes of location L00 at ``second`` after ``t0``."""
    out = [(kind, message(kind, "L00", lane, second, 50.0, 2)) for lane in (1, 2) for kind in KINDS]
    for _, m in out:
        m[OBSERVATION_TS] += t0 - T0
        m[SCHEDULED_TS] += t0 - T0
    return out


def publish(bootstrap: str, jobs: list[Job], t0: int) -> int:
    """One second per wall-clock second, the malformed record with the last, then the two
    flush seconds, the second once every job has drained the first; the number of input
    records."""
    records = [r for r in inputs(t0) if r[1][OBSERVATION_TS] < t0 + FLUSH_SECOND * SECOND_MS]
    by_second: dict[int, list] = {}
    for kind, m in records:
        by_second.setdefault((m[OBSERVATION_TS] - t0) // SECOND_MS, []).append((kind, m))
    flushes = [flush(second, t0) for second in (FLUSH_SECOND, SECOND_FLUSH)]
    seconds = [*(by_second[s] for s in sorted(by_second)), *flushes]
    for i, batch in enumerate(seconds):
        if i:
            time.sleep(1.0)
        if i == len(seconds) - 1:
            since = int(time.time() * 1000)
            for job in jobs:
                wait_drained(job, since, time.monotonic() + WAIT_S)
        for job in jobs:
            produce(bootstrap, job.topics, batch, malformed=i == len(by_second) - 1)
    return sum(len(b) for b in seconds) + 1


def wait_drained(job: Job, since_ms: int, deadline: float) -> None:
    while not drained(job.run_dir / rundir.PROGRESS, since_ms):
        assert job.process.poll() is None, job.log()
        assert time.monotonic() < deadline, f"{job.stage} did not drain"
        time.sleep(0.2)


def run_info(job: Job, bootstrap: str) -> RunInfo:
    """The job's topics as the evaluator reads a run's."""
    return RunInfo(
        id=job.run_id, stage=job.stage, output_topic=job.output, impl=job.impl,
        input_topics=tuple(job.topics.values()), engine="kafka-streams", bootstrap=bootstrap,
    )  # fmt: skip


@pytest.fixture(scope="module")
def stages(kafka_bootstrap, tmp_path_factory, kafka_canary) -> Iterator[Stages]:
    """Each case's job and its evaluation (summary.json as a dict); the jobs' listening
    sockets once all run. Each job is given a secured cluster's properties
    (``kafka_canary``) that PLAINTEXT leaves unused."""
    began = leaks.now()
    started = time.monotonic()
    build.job_classpath()  # one compile (or none: cached) for all
    compiled_s = time.monotonic() - started
    home = tmp_path_factory.mktemp("kafka-streams")
    unique = f"{int(time.time() * 1000) % 10**9}"
    jobs = [
        Job(kafka_bootstrap, home, stage, f"ks{i}-{unique}", impl)
        for i, (stage, impl) in enumerate(CASES)
    ]
    try:
        deadline = time.monotonic() + WAIT_S
        for job in jobs:
            job.wait_until_ready(deadline)
        ready_s = time.monotonic() - started - compiled_s
        sockets = leaks.listening([job.process.pid for job in jobs])
        t0 = int(time.time()) * SECOND_MS
        count = publish(kafka_bootstrap, jobs, t0)
        since = int(time.time() * 1000)
        for job in jobs:
            wait_drained(job, since, deadline)
        print(f"\ncompile {compiled_s:.1f} s; {len(jobs)} jobs ready after {ready_s:.1f} s")
        print(f"{count} inputs to each")
        found = Stages(home, began, sockets)
        for job in jobs:
            run = run_info(job, kafka_bootstrap)
            config = EvaluatorConfig(warmup_s=0, end_cut_s=END_CUT_S)
            out = home / f"{job.stage}-{job.impl}-evaluation"
            found[job.stage, job.impl] = (
                job,
                evaluate(kafka_bootstrap, run, config, out).as_dict(),
            )
        yield found
    finally:
        for job in jobs:
            job.stop()


@pytest.mark.parametrize(("stage", "impl"), CASES)
def test_stage_outputs_are_exact(stages, stage, impl):
    _, summary = stages[stage, impl]
    records = summary["records"]
    print(f"{stage} {impl}: {json.dumps(records)}")
    assert records["outputs"] > 0
    assert records["missing"] == 0
    assert records["duplicates"] == 0
    assert records["unexpected"] == 0
    assert records["wrong_values"] == 0
    assert records["input_ts_mismatch"] == 0
    assert records["negative"] == 0
    if stage != "ingest":  # ingest copies every input, and tells none malformed
        assert records["malformed_inputs"] == 1


def test_latency_settings_reach_kafka_streams(stages):
    """Producer linger 0 and cache 0 are what the clients got (Kafka Streams' own producer
    default, linger 100 ms, put a pass-through's p50 at 51 ms)."""
    job, _ = stages["ingest", "builtin"]
    effective = json.loads((job.run_dir / EFFECTIVE_FILE).read_text())
    assert effective["producer"]["linger.ms"] == "0"
    assert effective["streams"]["statestore.cache.max.bytes"] == "0"
    assert effective["streams"]["dsl.store.suppliers.class"].endswith("InMemoryDslStoreSuppliers")


def test_no_stage_needs_a_repartition(stages):
    """The inputs come keyed by location; the sliding window keeps its seconds by location
    in a store of its own rather than re-keying them through a topic."""
    for case, (job, _) in stages.items():
        topology = json.loads((job.run_dir / EFFECTIVE_FILE).read_text())["topology"]
        assert "repartition" not in topology, (case, topology)


@pytest.mark.parametrize("stage", ("tumbling", "sliding"))
def test_a_window_goes_out_with_the_input_that_closes_it(stages, kafka_bootstrap, stage):
    """The first flush second closes the last seconds' windows, and nothing more comes
    until the job has drained: each written before the second flush was closed by the
    first, the stream time the watermark delay past its end. The sliding window goes out
    with the second that ends it, as Flink's (tests/engines/closing.py)."""
    job, _ = stages[stage, "builtin"]
    run = run_info(job, kafka_bootstrap)
    windows = closing(kafka_bootstrap, run, job.config.watermark_delay_ms, "greatest")
    flushed = closed_by(windows, FLUSH_SECOND)
    assert flushed and out_of_turn(flushed) == [], flushed
    assert all(w.closed <= w.written for w in windows), windows


def test_job_stops_on_sigterm_and_leaves_no_process(stages):
    for job, _ in stages.values():
        assert job.stop() == 0, job.log()


def test_the_jobs_listen_on_loopback_only(stages):
    assert not leaks.beyond_loopback(stages.sockets)


def test_no_file_holds_the_password(stages, kafka_canary):
    """Not the job's settings, their effective values, its state nor the caches."""
    written = leaks.files_holding(kafka_canary, stages.home, cache_dir(), since=stages.began)
    assert not written
