"""Each stage against the real broker: the ``stagebench pipeline`` command end to end.

The command runs in a subprocess; once its query has started and processed a
first batch (the first second of input), the remaining seconds are published one
per wall-clock second while it runs, then a later "flush" second that moves the
watermark past every input second. The outputs must be those the input implies,
each once, with the values and input count the input implies, and each must carry
exactly the broker LogAppendTime of its inputs (read back from the input topics and
matched by identity): a pipeline carrying the driver's clock, the observation time
or anything else fails. The command then stops gracefully on SIGTERM.

The micro-batch cases of each stage run their queries side by side, on the same input,
in one shared Spark application (``engines.spark.server``, as a suite's runs do: the same
``engines.spark.job.start`` builds them), which stops each without an error; the
real-time case and the tumbling-union ones run the command itself.

A location-second with a missing lane (L00, second 1) is partial: the custom
tumbling window emits it only when the watermark passes its end, after the complete
seconds 2 and 3, so it reaches the custom sliding window late, and the windows that
contain it must still equal the built-in ones.

Every job is given a secured cluster's properties on PLAINTEXT (``kafka_canary``), whose
password no file of theirs may hold; a local driver listens on the loopback interface only.
"""

import collections
import concurrent.futures
import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Consumer, Producer, TopicPartition

from engines.config import PipelineConfig
from ground import rundir
from ground.config import from_mapping
from ground.contract import (
    FLOW,
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    KIND,
    LANE,
    LANES_SEEN,
    LOCATION_ID,
    NUM_LANES,
    OBSERVATION_TS,
    RECORD,
    RUN_ID,
    SCHEDULED_TS,
    SECOND_MS,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
    SPEED,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    WINDOW_END,
    WINDOW_START,
)
from ground.kafka.topics import create_topics
from ground.paths import cache_dir
from stagebench.run.application import Application
from stagebench.run.job import write_pipeline_config
from tests import leaks
from tests.engines.spark.test_transforms import T0, assert_rows_equal, message

pytestmark = [pytest.mark.integration, pytest.mark.spark]

SECONDS = 5
LOCATIONS = {f"L{i:02d}": 2 + i % 2 for i in range(8)}  # 2 or 3 lanes
FLUSH_SECOND = SECONDS + 8
WAIT_S = 150
MALFORMED = b'{"malformed": true}'
"""Valid JSON (ingest embeds it unchanged) but not an input message: parse drops it."""


def inputs(t0: int = T0) -> list[tuple[str, dict]]:
    """(kind, message) of every location/lane/second from ``t0`` (epoch ms, a whole second).

    Location L00 misses lane 2 at second 1; L03 counts no vehicle at second 2 (a relative
    change from it is null); the last two lanes are the flush second.
    """
    out = []
    for second in range(SECONDS):
        for location, lanes in LOCATIONS.items():
            for lane in range(1, lanes + 1):
                if (location, lane, second) == ("L00", 2, 1):
                    continue
                speed = 70.0 + lane - 3 * second
                flow = 0.0 if (location, second) == ("L03", 2) else 5.0 * lane + 2 * second
                out.append((SPEED, message(SPEED, location, lane, second, speed, lanes)))
                out.append((FLOW, message(FLOW, location, lane, second, flow, lanes)))
    for lane in (1, 2):  # moves the watermark past every second above
        for kind in (SPEED, FLOW):
            out.append((kind, message(kind, "L00", lane, FLUSH_SECOND, 50.0, 2)))
    shift = t0 - T0
    for _, m in out:
        m[OBSERVATION_TS] += shift
        m[SCHEDULED_TS] += shift
    return out


def produce(
    bootstrap: str, topics: dict[str, str], records: list[tuple[str, dict]], malformed=True
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for kind, msg in records:
        producer.produce(topics[kind], key=msg[LOCATION_ID], value=json.dumps(msg))
    if malformed:
        producer.produce(topics[SPEED], key="L99", value=MALFORMED)
    assert producer.flush(30) == 0


def _second_of(msg: dict, t0: int) -> int:
    return (msg[OBSERVATION_TS] - t0) // SECOND_MS


def publish_while_running(
    bootstrap: str,
    topics: dict[str, str] | list[dict[str, str]],
    records: list[tuple[str, dict]],
    t0: int,
    first_batch_done,
) -> None:
    """The first second, then (once ``first_batch_done()``) one second per wall-clock second,
    to ``topics`` (or to each of a list of them, the same records).

    The flush second and the malformed record come last.
    """
    every = topics if isinstance(topics, list) else [topics]
    by_second = collections.defaultdict(list)
    for kind, msg in records:
        by_second[_second_of(msg, t0)].append((kind, msg))
    for each in every:
        produce(bootstrap, each, by_second[0], malformed=False)
    del by_second[0]
    first_batch_done()
    for second in sorted(by_second):
        time.sleep(1.0)
        last = second == max(by_second)
        for each in every:
            produce(bootstrap, each, by_second[second], malformed=last)


def wait_for_first_batch(job: "Job", bootstrap: str, real_time: bool) -> None:
    """Wait until the job has processed a batch with input.

    Micro-batches: a progress event with input rows. Real-time mode (whose one batch
    reports no progress for minutes): an output on the output topic.
    """
    deadline = time.monotonic() + WAIT_S
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    try:
        while time.monotonic() < deadline:
            job.check()
            if real_time:
                _, high = probe.get_watermark_offsets(TopicPartition(job.output, 0), timeout=5)
                if high > 0:
                    return
            elif any(
                e["event"] == "progress" and e.get("numInputRows", 0) > 0
                for e in _events(job.run_dir)
            ):
                return
            time.sleep(0.5)
    finally:
        probe.close()
    raise AssertionError(f"the job processed no batch within {WAIT_S} s")


def wait_until_ready(job: "Job") -> None:
    deadline = time.monotonic() + WAIT_S
    while not (job.run_dir / rundir.READY).exists():
        job.check()
        assert time.monotonic() < deadline, f"the job was not ready within {WAIT_S} s"
        time.sleep(0.5)


def _events(run_dir: Path) -> list[dict]:
    path = run_dir / rundir.PROGRESS
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.endswith("}")]


def consume(bootstrap: str, topic: str, want: int, deadline: float) -> list[tuple[int, int, dict]]:
    """(timestamp type, broker timestamp, value) of output records until ``want`` or deadline."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    out = []
    try:
        while len(out) < want and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            ts_type, ts = msg.timestamp()
            out.append((ts_type, ts, json.loads(msg.value())))
        # anything beyond the expected count is a duplicate or a wrong output
        extra_deadline = time.monotonic() + 3
        while time.monotonic() < extra_deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                ts_type, ts = msg.timestamp()
                out.append((ts_type, ts, json.loads(msg.value())))
    finally:
        consumer.close()
    return out


def read_inputs(bootstrap: str, topics: list[str], want: int) -> dict[tuple, tuple[int, bytes]]:
    """(topic, partition, offset) -> (broker LogAppendTime, value) of every input record."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    metadata = consumer.list_topics(timeout=10)
    consumer.assign(
        [TopicPartition(t, p, 0) for t in topics for p in metadata.topics[t].partitions]
    )
    found = {}
    deadline = time.monotonic() + 30
    try:
        while len(found) < want and time.monotonic() < deadline:
            for m in consumer.consume(500, timeout=0.5):
                assert m.error() is None, m.error()
                ts_type, ts = m.timestamp()
                assert ts_type == TIMESTAMP_LOG_APPEND_TIME
                found[m.topic(), m.partition(), m.offset()] = (ts, m.value())
    finally:
        consumer.close()
    assert len(found) == want, (len(found), want)
    return found


def input_stamps(stage: str, stamps: dict[tuple, tuple[int, bytes]]):
    """A function: output value -> the (latest, earliest) broker timestamps of its inputs.

    Computed from the input topics alone, by each stage's identity: the record itself
    (ingest, parse), the speed/flow pair of a location, lane and observation time
    (join), every pair of a location-second (tumbling), every second of the window
    (sliding).
    """
    if stage in ("ingest", "parse"):
        by_record = {identity: (ts, ts) for identity, (ts, _) in stamps.items()}
        return lambda v: by_record.get((v[SOURCE_TOPIC], v[SOURCE_PARTITION], v[SOURCE_OFFSET]))
    twins = collections.defaultdict(list)
    for ts, value in stamps.values():
        if value != MALFORMED:
            m = json.loads(value)
            twins[m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]].append(ts)
    pairs = {key: (max(ts), min(ts)) for key, ts in twins.items() if len(ts) == 2}
    if stage == "join":
        return lambda v: pairs.get((v[LOCATION_ID], v[LANE], v[OBSERVATION_TS]))
    seconds = collections.defaultdict(list)
    for (location, _, observed), pair in pairs.items():
        seconds[location, observed] += pair
    per_second = {key: (max(ts), min(ts)) for key, ts in seconds.items()}
    if stage == "tumbling":
        return lambda v: per_second.get((v[LOCATION_ID], v[WINDOW_START]))

    def window(v: dict) -> tuple[int, int] | None:
        found = [
            per_second[v[LOCATION_ID], t]
            for t in range(v[WINDOW_START], v[WINDOW_END], SECOND_MS)
            if (v[LOCATION_ID], t) in per_second
        ]
        return (max(f[0] for f in found), min(f[1] for f in found)) if found else None

    return window


def expected_count(stage: str, records: list[tuple[str, dict]]) -> int:
    """Outputs the input implies; a window of the flush second never closes (no later data)."""
    pairs = {(m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]) for _, m in records}
    return {
        "ingest": len(records) + 1,
        "parse": len(records),
        "join": len(pairs),
        "tumbling": len(_closed_seconds(records)),
        "sliding": len(_closed_seconds(records)),
    }[stage]


def _flush_ms(records: list[tuple[str, dict]]) -> int:
    return max(m[OBSERVATION_TS] for _, m in records)


def _closed_seconds(records: list[tuple[str, dict]]) -> list[tuple[str, int]]:
    flush = _flush_ms(records)
    return sorted(
        {(m[LOCATION_ID], m[OBSERVATION_TS]) for _, m in records if m[OBSERVATION_TS] < flush}
    )


def expected_values(stage: str, records: list[tuple[str, dict]]) -> dict[tuple, dict]:
    """From parse on: each output the input implies, by :func:`identity`, with its values
    and input count (its broker timestamps: :func:`input_stamps`).

    The stages' semantics in plain Python (docs/method.md#stages): the join pairs the
    speed and the flow of a location, lane and observation time; a tumbling window
    holds the pairs of a closed location-second; a sliding window (3 s) the seconds
    present up to one with a result: that second's values and their relative change
    1 s and 2 s back (null when that second is missing or zero).
    """
    if stage == "parse":
        return {
            (kind, m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]): {kind: m[kind], INPUT_COUNT: 1}
            for kind, m in records
        }
    twins: dict[tuple, dict[str, dict]] = collections.defaultdict(dict)
    for kind, m in records:
        twins[m[LOCATION_ID], m[LANE], m[OBSERVATION_TS]][kind] = m
    pairs = {key: (t[SPEED], t[FLOW]) for key, t in twins.items() if len(t) == 2}
    if stage == "join":
        return {
            key: {SPEED: speed[SPEED], FLOW: flow[FLOW], INPUT_COUNT: 2}
            for key, (speed, flow) in pairs.items()
        }
    lanes = collections.defaultdict(list)
    for (location, _, observed), pair in pairs.items():
        lanes[location, observed].append(pair)
    seconds = {
        (location, observed): {
            WINDOW_END: observed + SECOND_MS,
            FLOW_SUM: sum(flow[FLOW] for _, flow in found),
            SPEED_AVG: sum(speed[SPEED] for speed, _ in found) / len(found),
            LANES_SEEN: len(found),
            NUM_LANES: max(speed[NUM_LANES] for speed, _ in found),
            INPUT_COUNT: 2 * len(found),
        }
        for (location, observed), found in lanes.items()
        if (location, observed) in set(_closed_seconds(records))
    }
    if stage == "tumbling":
        return seconds

    def change(now: dict, then: dict | None, field: str) -> float | None:
        return (
            None if then is None or then[field] == 0 else (now[field] - then[field]) / then[field]
        )

    windows = {}
    for (location, last), now in seconds.items():
        inside = [seconds.get((location, last - back * SECOND_MS)) for back in range(3)]
        short, long = inside[1], inside[2]
        windows[location, last - 2 * SECOND_MS] = {
            WINDOW_END: last + SECOND_MS,
            FLOW_SUM: now[FLOW_SUM],
            SPEED_AVG: now[SPEED_AVG],
            FLOW_CHANGE_SHORT: change(now, short, FLOW_SUM),
            FLOW_CHANGE_LONG: change(now, long, FLOW_SUM),
            SPEED_CHANGE_SHORT: change(now, short, SPEED_AVG),
            SPEED_CHANGE_LONG: change(now, long, SPEED_AVG),
            INPUT_COUNT: sum(w[INPUT_COUNT] for w in inside if w is not None),
        }
    return windows


def identity(stage: str, value: dict) -> tuple:
    """What makes an output of ``stage`` that output (ground.stages), from parse on."""
    if stage == "parse":
        return (value[KIND], value[LOCATION_ID], value[LANE], value[OBSERVATION_TS])
    if stage == "join":
        return (value[LOCATION_ID], value[LANE], value[OBSERVATION_TS])
    return (value[LOCATION_ID], value[WINDOW_START])


def _second(stage: str, value: dict) -> int | None:
    """The location-second an output of a window stage belongs to."""
    if stage == "tumbling":
        return value[WINDOW_START]
    if stage == "sliding":
        return value[WINDOW_END] - 1000
    return None


CASES = [
    ("ingest", "builtin", "processing-time"),
    ("parse", "builtin", "processing-time"),
    ("join", "builtin", "processing-time"),
    ("tumbling", "builtin", "processing-time"),
    ("tumbling", "custom", "processing-time"),
    ("sliding", "builtin", "processing-time"),
    ("sliding", "custom", "processing-time"),
    ("ingest", "builtin", "real-time"),
]
"""The micro-batch cases run side by side as queries of one shared application; the
real-time case (every task slot for itself, as a suite gives it) as a ``stagebench
pipeline`` command."""


@dataclass
class Job:
    """The job of one case, its topics and run directory: a ``stagebench pipeline``
    process, or a query in a shared application (``engines.spark.server``)."""

    process: subprocess.Popen | None
    topics: dict[str, str]
    output: str
    run_id: str
    run_dir: Path
    application: Application | None = None

    def check(self) -> None:
        """AssertionError, with the job's error, once the job or its query has ended."""
        if self.process is not None:
            assert self.process.poll() is None, self.process.communicate()[1][-3000:]
            return
        assert self.application is not None
        self.application.check()
        failed = self.run_dir / rundir.FAILED
        assert not failed.exists(), failed.read_text()

    def stop(self) -> str:
        """Stop the job gracefully (SIGTERM; a query: the application's stop command);
        what went wrong ("" when it stopped without an error: the command with exit code 0)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            _, stderr = self.process.communicate(timeout=60)
            return "" if self.process.returncode == 0 else stderr[-3000:]
        assert self.application is not None
        self.application.send({"stop": str(self.run_dir)})
        deadline = time.monotonic() + 60
        while not (self.run_dir / rundir.STOPPED).exists():
            self.application.check()
            if time.monotonic() > deadline:
                return "the query did not stop within 60 s"
            time.sleep(0.2)
        failed = self.run_dir / rundir.FAILED
        return failed.read_text() if failed.exists() else ""


def _topics(bootstrap: str) -> tuple[str, dict[str, str], str]:
    """A new run id, its input topics (2 partitions each) and its output topic."""
    run_id = uuid.uuid4().hex[:10]
    topics = {SPEED: f"speed-{run_id}", FLOW: f"flow-{run_id}"}
    output = f"out-{run_id}"
    create_topics(bootstrap, list(topics.values()), partitions=2)
    create_topics(bootstrap, [output])
    return run_id, topics, output


def start_job(bootstrap: str, home: Path, stage: str, impl: str, trigger: str) -> Job:
    """The ``stagebench pipeline`` command of a case, end to end."""
    run_id, topics, output = _topics(bootstrap)
    run_dir = home / "run"
    command = [
        sys.executable, "-m", "stagebench", "pipeline",
        "--stage", stage, "--impl", impl,
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", output, "--run-id", run_id, "--run-dir", str(run_dir),
        "--bootstrap", bootstrap, "--master", "local[2]", "--shuffle-partitions", "2",
        "--trigger", trigger,
    ]  # fmt: skip
    if trigger == "real-time":  # a task slot per input partition (2 topics x 2) and
        # per shuffle partition (2) of an aggregation: every task runs at once
        command += ["--master", "local[6]" if stage == "tumbling-union" else "local[4]"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return Job(process, topics, output, run_id, run_dir)


def pipeline_config(
    bootstrap: str, run_dir: Path, stage: str, impl: str, topics: dict[str, str], output: str
) -> PipelineConfig:
    """A micro-batch case's configuration, as ``stagebench pipeline --master local[2]
    --shuffle-partitions 2`` would write it."""
    mapping = {
        "stage": stage, "impl": impl, "speed_topic": topics[SPEED], "flow_topic": topics[FLOW],
        "output_topic": output, "run_id": run_dir.name, "bootstrap": bootstrap,
        "checkpoint_dir": str(run_dir / "checkpoint"),
        "settings": {"master": "local[2]", "shuffle_partitions": 2},
    }  # fmt: skip
    return from_mapping(PipelineConfig, mapping, "pipeline")


def start_query(application: Application, bootstrap: str, home: Path, stage: str, impl: str) -> Job:
    """A micro-batch case's query, sent to the shared ``application``."""
    run_id, topics, output = _topics(bootstrap)
    run_dir = home / run_id
    config = pipeline_config(bootstrap, run_dir, stage, impl, topics, output)
    application.send({"start": str(write_pipeline_config(run_dir, config))})
    return Job(None, topics, output, run_id, run_dir, application)


@dataclass
class Outcome:
    """What a case's job did: its input, its outputs, and what went wrong stopping it
    ("" nothing)."""

    job: Job
    t0: int
    records: list[tuple[str, dict]]
    want: int
    flushed: int
    out: list[tuple[int, int, dict]]
    stop_error: str
    sockets: list[leaks.Listener]
    """The listening sockets of the job's processes once it ran."""


def _wanted(stage: str, impl: str, records: list[tuple[str, dict]]) -> tuple[int, int]:
    """(outputs to wait for, of them the flush second's): the custom tumbling window emits
    the complete flush second at once; every other window of it waits for a watermark that
    never comes."""
    flushed = int((stage, impl) == ("tumbling", "custom"))
    return expected_count(stage, records) + flushed, flushed


def run_alone(job: Job, bootstrap: str, case: tuple) -> Outcome:
    """A job's case: the input published while it runs, its outputs read, the job stopped."""
    stage, impl, trigger = case
    assert job.process is not None
    try:
        wait_until_ready(job)
        sockets = leaks.listening([job.process.pid])
        # event time starts at the current second, as the publisher's does
        t0 = int(time.time()) * SECOND_MS
        records = inputs(t0)
        publish_while_running(
            bootstrap,
            job.topics,
            records,
            t0,
            lambda: wait_for_first_batch(job, bootstrap, trigger == "real-time"),
        )
        want, flushed = _wanted(stage, impl, records)
        out = consume(bootstrap, job.output, want, time.monotonic() + WAIT_S)
    finally:
        error = job.stop()
    return Outcome(job, t0, records, want, flushed, out, error, sockets)


def run_together(jobs: dict[tuple, Job], bootstrap: str) -> dict[tuple, Outcome | Exception]:
    """The queries' cases side by side: the same input (on each query's own topics),
    published once every query is ready and again once each has processed the first
    second; the outputs read, each query stopped. A case whose query failed gets its
    error (the others go on)."""
    found: dict[tuple, Outcome | Exception] = {}

    def each(step: Callable[[Job], None]) -> None:
        for case, job in jobs.items():
            if case not in found:
                try:
                    step(job)
                except Exception as err:
                    found[case] = err

    try:
        each(wait_until_ready)
        application = next(iter(jobs.values())).application
        assert application is not None and application.pid is not None
        sockets = leaks.listening([application.pid])
        t0 = int(time.time()) * SECOND_MS
        records = inputs(t0)
        running = [job.topics for case, job in jobs.items() if case not in found]
        publish_while_running(
            bootstrap, running, records, t0,
            lambda: each(lambda job: wait_for_first_batch(job, bootstrap, False)),
        )  # fmt: skip
        wanted = {case: _wanted(case[0], case[1], records) for case in jobs}
        deadline = time.monotonic() + WAIT_S
        with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
            outs = {
                case: pool.submit(consume, bootstrap, job.output, wanted[case][0], deadline)
                for case, job in jobs.items()
                if case not in found
            }
        for case, out in outs.items():
            if case not in found:
                found[case] = Outcome(
                    jobs[case], t0, records, *wanted[case], out.result(), "", sockets
                )
    finally:
        for case, job in jobs.items():
            error = job.stop()
            if isinstance(outcome := found.get(case), Outcome):
                outcome.stop_error = error
    return found


@pytest.fixture(scope="module")
def jobs_home(tmp_path_factory, kafka_canary) -> tuple[Path, float]:
    """Where every case's job runs, and from when. Each job is given a secured cluster's
    properties (``kafka_canary``) that PLAINTEXT leaves unused."""
    return tmp_path_factory.mktemp("jobs"), leaks.now()


@pytest.fixture(scope="module")
def outcomes(kafka_bootstrap, jobs_home) -> Iterator[Callable[[tuple], Outcome]]:
    """What the job of a case did. A job's start (a JVM, the session) took most of its
    test, about 35 s on two cores, and a case's input most of the rest: the micro-batch
    cases' queries run side by side in one Spark application (as a suite's runs can, the
    same ``engines.spark.job.start``), on the same input, at the first of them; the
    real-time case runs the command, alone."""
    home, _ = jobs_home
    shared = [case for case in CASES if case[2] != "real-time"]
    config = pipeline_config(kafka_bootstrap, home / "none", "ingest", "builtin",
                             {SPEED: "s", FLOW: "f"}, "o")  # fmt: skip
    application = Application(home / "application", config)
    done: dict[tuple, Outcome | Exception] = {}

    def take(case: tuple) -> Outcome:
        if case in shared and case not in done:
            try:  # once: a failure is every query case's
                application.start(WAIT_S, lambda *_: None)
                jobs = {c: start_query(application, kafka_bootstrap, home, *c[:2]) for c in shared}
                done.update(run_together(jobs, kafka_bootstrap))
            except Exception as err:
                done.update(dict.fromkeys(shared, err))
            finally:
                application.close(60)
        if case not in shared and case not in done:
            job = start_job(kafka_bootstrap, home / "-".join(case), *case)
            try:
                done[case] = run_alone(job, kafka_bootstrap, case)
            finally:
                if job.process.poll() is None:  # it did not stop on SIGTERM
                    job.process.kill()
                    job.process.wait()
        if isinstance(outcome := done[case], Exception):
            raise outcome
        return outcome

    try:
        yield take
    finally:
        application.close(60)


@pytest.mark.parametrize(("stage", "impl", "trigger"), CASES)
def test_stage_writes_expected_outputs(outcomes, kafka_bootstrap, stage, impl, trigger):
    ran = outcomes((stage, impl, trigger))
    job, t0, records, want, flushed, out = (
        ran.job, ran.t0, ran.records, ran.want, ran.flushed, ran.out
    )  # fmt: skip
    topics, unique, run_dir = job.topics, job.run_id, job.run_dir
    assert not ran.stop_error, ran.stop_error  # stopped gracefully (the command: exit code 0)
    # a local master's driver: its RPC and block manager on the loopback interface only
    assert ran.sockets and not leaks.beyond_loopback(ran.sockets)

    values = [v for _, _, v in out if _second(stage, v) != _flush_ms(records)]
    assert len(out) == want and len(out) - len(values) == flushed, (len(out), want)
    assert all(ts_type == TIMESTAMP_LOG_APPEND_TIME for ts_type, _, _ in out)
    assert all(v[INPUT_TS_LATEST] <= ts for _, ts, v in out), "output before its input"
    assert all(v[INPUT_TS_EARLIEST] <= v[INPUT_TS_LATEST] for v in values)
    assert all(v[RUN_ID] == unique for v in values)
    _check_stage(stage, records, values, t0)
    # the broker's clock, and only it: each output carries its inputs' LogAppendTime
    stamps = read_inputs(kafka_bootstrap, list(topics.values()), len(records) + 1)
    if stage == "ingest":  # and each record, unchanged
        embedded = {(v[SOURCE_TOPIC], v[SOURCE_PARTITION], v[SOURCE_OFFSET]): v for v in values}
        assert {k: v[RECORD] for k, v in embedded.items()} == {
            k: json.loads(value) for k, (_, value) in stamps.items()
        }
    expected = input_stamps(stage, stamps)
    wrong_latest = [(v, expected(v)) for v in values if v[INPUT_TS_LATEST] != expected(v)[0]]
    assert not wrong_latest, (
        f"{len(wrong_latest)} of {len(values)} outputs carry another input_ts_latest than "
        f"their inputs' broker timestamp (output, (latest, earliest)): {wrong_latest[:3]}"
    )
    wrong_earliest = [(v, expected(v)) for v in values if v[INPUT_TS_EARLIEST] != expected(v)[1]]
    assert not wrong_earliest, (
        f"{len(wrong_earliest)} of {len(values)} outputs carry another input_ts_earliest than "
        f"their inputs' broker timestamp (output, (latest, earliest)): {wrong_earliest[:3]}"
    )

    assert (run_dir / "pipeline.ready").exists()
    assert json.loads((run_dir / "pipeline.json").read_text())["pipeline"]["stage"] == stage
    events = _events(run_dir)
    kinds = {e["event"] for e in events}
    # a real-time batch lasts its checkpoint interval (5 min): no progress within the test
    assert {"started", "progress"} - kinds <= ({"progress"} if trigger == "real-time" else set())
    if stage != "ingest":
        malformed = sum(
            e.get("observedMetrics", {}).get("parse", {}).get("malformed", 0)
            for e in events
            if e["event"] == "progress"
        )
        assert malformed == 1


def _check_stage(stage: str, records, values: list[dict], t0: int) -> None:
    """Each output, once, with the values and input count that the input implies."""
    if stage == "ingest":
        identities = {(v[SOURCE_TOPIC], v[SOURCE_PARTITION], v[SOURCE_OFFSET]) for v in values}
        assert len(identities) == len(values) == len(records) + 1
        assert all(v[INPUT_COUNT] == 1 for v in values)
        return
    got = {identity(stage, v): v for v in values}
    assert len(got) == len(values), "an output written twice"
    assert_rows_equal(got, expected_values(stage, records))
    counts = {key: v[INPUT_COUNT] for key, v in got.items()}
    if stage == "tumbling":
        assert counts[("L00", t0 + 1000)] == 2  # the second with a missing lane
        assert counts[("L01", t0)] == 6  # 3 lanes, speed and flow each
    elif stage == "sliding":
        # L00's partial second 1 (2 inputs, a complete second 4) in the windows ending at 1, 2, 3
        late = {1: 4 + 2, 2: 4 + 2 + 4, 3: 2 + 4 + 4}
        assert {last: counts[("L00", t0 + (last - 2) * SECOND_MS)] for last in late} == late
        assert got[("L03", t0 + 1000)][FLOW_CHANGE_SHORT] is None  # from a zero flow


def union_windows(records: list[tuple[str, dict]]) -> dict[tuple, dict]:
    """Every location-second of the input, the flush second too (update mode writes a
    window without waiting for the watermark): both kinds of every lane."""
    found: dict[tuple, list[tuple[str, dict]]] = collections.defaultdict(list)
    for kind, m in records:
        found[m[LOCATION_ID], m[OBSERVATION_TS]].append((kind, m))
    windows = {}
    for key, inside in found.items():
        speeds = [m[SPEED] for kind, m in inside if kind == SPEED]
        windows[key] = {
            WINDOW_END: key[1] + SECOND_MS,
            FLOW_SUM: sum(m[FLOW] for kind, m in inside if kind == FLOW),
            SPEED_AVG: sum(speeds) / len(speeds),
            LANES_SEEN: len({m[LANE] for _, m in inside}),
            NUM_LANES: max(m[NUM_LANES] for _, m in inside),
            INPUT_COUNT: len(inside),
        }
    return windows


def consume_updates(
    bootstrap: str, topic: str, complete: dict[tuple, int], deadline: float
) -> list[tuple[int, int, dict]]:
    """(timestamp type, broker timestamp, value) of every update, in the topic's order,
    until each window of ``complete`` (identity -> input count) had its complete one."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    out, waiting = [], dict(complete)
    try:
        while waiting and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            value = json.loads(msg.value())
            out.append((*msg.timestamp(), value))
            key = identity("tumbling-union", value)
            if waiting.get(key) == value[INPUT_COUNT]:
                del waiting[key]
        # an update after a complete window would be a defect: read what else comes
        extra_deadline = time.monotonic() + 3
        while time.monotonic() < extra_deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                out.append((*msg.timestamp(), json.loads(msg.value())))
    finally:
        consumer.close()
    return out


@pytest.mark.parametrize("trigger", ["processing-time", "real-time"])
def test_tumbling_union_writes_each_window_until_complete(kafka_bootstrap, tmp_path, trigger):
    """Update mode: a window goes out as its inputs arrive, each update carrying the
    inputs so far (never more, never fewer than before), until one carries them all and
    equals the tumbling window of the same inputs; its broker times are the inputs'."""
    job = start_job(kafka_bootstrap, tmp_path, "tumbling-union", "builtin", trigger)
    try:
        wait_until_ready(job)
        t0 = int(time.time()) * SECOND_MS
        records = inputs(t0)
        publish_while_running(
            kafka_bootstrap,
            job.topics,
            records,
            t0,
            lambda: wait_for_first_batch(job, kafka_bootstrap, trigger == "real-time"),
        )
        want = union_windows(records)
        complete = {key: row[INPUT_COUNT] for key, row in want.items()}
        out = consume_updates(kafka_bootstrap, job.output, complete, time.monotonic() + WAIT_S)
    finally:
        error = job.stop()
    assert not error, error  # exit code 0 on SIGTERM

    assert all(ts_type == TIMESTAMP_LOG_APPEND_TIME for ts_type, _, _ in out)
    assert all(v[INPUT_TS_LATEST] <= ts for _, ts, v in out), "output before its input"
    updates: dict[tuple, list[dict]] = collections.defaultdict(list)
    for _, _, v in out:
        updates[identity("tumbling-union", v)].append(v)
    assert updates.keys() == want.keys()
    for key, written in updates.items():
        counts = [v[INPUT_COUNT] for v in written]
        assert counts == sorted(set(counts)), (key, counts)  # growing, never repeated
        assert counts[-1] == want[key][INPUT_COUNT], (key, counts)
    assert_rows_equal({key: written[-1] for key, written in updates.items()}, want)
    stamps = read_inputs(kafka_bootstrap, list(job.topics.values()), len(records) + 1)
    seconds = collections.defaultdict(list)
    for ts, value in stamps.values():
        if value != MALFORMED:
            m = json.loads(value)
            seconds[m[LOCATION_ID], m[OBSERVATION_TS]].append(ts)
    for key, written in updates.items():
        last = written[-1]
        assert (last[INPUT_TS_LATEST], last[INPUT_TS_EARLIEST]) == (
            max(seconds[key]),
            min(seconds[key]),
        ), key


def test_failing_query_exits_non_zero_with_one_line_error(kafka_bootstrap, unique, tmp_path):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, [*topics.values(), f"out-{unique}"])
    produce(kafka_bootstrap, topics, inputs()[:4])
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", "join",
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", f"out-{unique}", "--run-dir", str(tmp_path / "run"),
        "--bootstrap", kafka_bootstrap, "--master", "local[2]", "--max-seconds", str(WAIT_S),
        # the join's state store cannot be created: the first micro-batch fails
        "--conf", "spark.sql.streaming.stateStore.providerClass=no.such.Provider",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S + 60)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR: ")]
    assert len(errors) == 1
    assert "join query failed" in errors[0]


def test_real_time_mode_refuses_too_few_task_slots(kafka_bootstrap, unique, tmp_path):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", "ingest",
        "--trigger", "real-time", "--master", "local[2]",
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", f"out-{unique}", "--run-dir", str(tmp_path / "run"),
        "--bootstrap", kafka_bootstrap,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("ERROR: real-time mode needs a task slot for every task")


def test_no_file_holds_the_password(outcomes, jobs_home, kafka_canary):
    """Not the jobs' configurations, logs, checkpoints nor the caches."""
    for case in CASES:
        outcomes(case)  # every case has run
    home, began = jobs_home
    assert not leaks.files_holding(kafka_canary, home, cache_dir(), since=began)
