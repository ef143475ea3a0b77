"""The evaluator against a real broker: known records in, exact latencies out."""

import json
import subprocess
import sys
import time
import uuid
from dataclasses import replace

import pandas as pd
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate, measure_topics
from evaluator.model.run_info import RunInfo, save_run
from ground import contract as s
from ground.errors import EvaluationError, TopicError
from ground.kafka.topics import create_topics

pytestmark = pytest.mark.integration

LOCATIONS = ("LOC_A", "LOC_B")
NUM_LANES = 2
SECONDS = 6
BASE_TS = 1_763_867_400_000


def _input(loc: str, lane: int, second: int, kind: str) -> dict:
    return {
        s.LOCATION_ID: loc,
        s.LANE: lane,
        s.OBSERVATION_TS: BASE_TS + second * 1000,
        kind: 80.5 if kind == s.SPEED else 12.0,
        s.LATITUDE: 52.1,
        s.LONGITUDE: 5.1,
        s.NUM_LANES: NUM_LANES,
        s.ACCURACY: 95.0,
        s.SEQ: second,
        s.SCHEDULED_TS: BASE_TS + second * 1000 + 7,
    }


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for value in values:
        producer.produce(topic, value)
        producer.poll(0)
    assert producer.flush(30) == 0


def _read_back(bootstrap: str, topic: str, count: int) -> list[tuple[int, int, int, bytes]]:
    """(partition, offset, broker timestamp, value) of every record, bounded wait."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, 0, 0)])
    records, deadline = [], time.monotonic() + 30
    while len(records) < count and time.monotonic() < deadline:
        for m in consumer.consume(100, timeout=0.5):
            assert m.error() is None
            records.append((m.partition(), m.offset(), m.timestamp()[1], m.value()))
    consumer.close()
    assert len(records) == count
    return records


@pytest.fixture
def join_run(kafka_bootstrap, unique):
    """Inputs with one lane-second lacking its flow twin and two malformed values;
    join outputs for every pair except one, one pair written twice."""
    speed, flow, out = f"speed-{unique}", f"flow-{unique}", f"out-{unique}"
    create_topics(kafka_bootstrap, [speed, flow, out])
    keys = [(loc, lane, sec) for sec in range(SECONDS) for loc in LOCATIONS for lane in range(1, 3)]
    no_flow = keys[5]
    no_accuracy = {k: v for k, v in _input("LOC_Z", 1, 0, s.SPEED).items() if k != s.ACCURACY}
    speed_values = [json.dumps(_input(*k, s.SPEED)).encode() for k in keys]
    _produce(kafka_bootstrap, speed, [*speed_values, json.dumps(no_accuracy).encode()])
    _produce(
        kafka_bootstrap,
        flow,
        [json.dumps(_input(*k, s.FLOW)).encode() for k in keys if k != no_flow] + [b"{not json"],
    )
    speed_recs = _read_back(kafka_bootstrap, speed, len(keys) + 1)
    flow_recs = _read_back(kafka_bootstrap, flow, len(keys))
    ts = {}
    for kind, recs in ((s.SPEED, speed_recs), (s.FLOW, flow_recs)):
        for _, _, stamp, value in recs:
            try:
                v = json.loads(value)
            except ValueError:
                continue
            ts[(kind, v[s.LOCATION_ID], v[s.LANE], v[s.OBSERVATION_TS])] = stamp
    pairs = []
    for loc, lane, sec in keys:
        obs = BASE_TS + sec * 1000
        if (s.FLOW, loc, lane, obs) in ts:
            a, b = ts[(s.SPEED, loc, lane, obs)], ts[(s.FLOW, loc, lane, obs)]
            key = {s.LOCATION_ID: loc, s.LANE: lane, s.OBSERVATION_TS: obs}
            pairs.append({**key, s.INPUT_TS_LATEST: max(a, b), s.INPUT_TS_EARLIEST: min(a, b)})
    written = pairs[:7] + pairs[8:] + [pairs[3]]  # pairs[7] missing, pairs[3] twice
    values = [
        json.dumps({s.RUN_ID: unique, **p, s.INPUT_COUNT: 2, s.SPEED: 80.5, s.FLOW: 12.0}).encode()
        for p in written
    ]
    _produce(kafka_bootstrap, out, values)
    out_recs = _read_back(kafka_bootstrap, out, len(values))
    run = RunInfo(id=unique, stage="join", output_topic=out, input_topics=(speed, flow),
                  bootstrap=kafka_bootstrap, metadata={"versions": {"kafka": "test"}},
                  config={"pipeline": {"stage": "join"}})  # fmt: skip
    return run, written, out_recs, len(pairs)


def test_join_latencies_exact_record_by_record(kafka_bootstrap, join_run, tmp_path):
    run, written, out_recs, n_pairs = join_run
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path).as_dict()

    got = pd.read_parquet(tmp_path / "latencies.parquet").sort_values("offset")
    stamps = [r[2] for r in out_recs]
    want = [t - p[s.INPUT_TS_LATEST] for p, t in zip(written, stamps, strict=True)]
    want_e = [t - p[s.INPUT_TS_EARLIEST] for p, t in zip(written, stamps, strict=True)]
    assert got["latency_ms"].tolist() == want
    assert got["latency_earliest_ms"].tolist() == want_e
    assert got["timestamp"].tolist() == stamps

    rec = summary["records"]
    assert rec["outputs"] == len(written)
    assert rec["expected"] == n_pairs
    assert rec["missing"] == 1
    assert rec["duplicates"] == 1
    assert rec["unexpected"] == 0
    assert rec["input_ts_mismatch"] == 0
    assert rec["negative"] == 0
    assert rec["malformed_inputs"] == 2  # not JSON (flow), no accuracy (speed)
    assert summary["latency_ms"]["count"] == len(written)
    assert summary["latency_ms"]["max"] == max(want)
    assert summary["versions"]["kafka"] == "test"
    assert summary["config"]["pipeline"] == {"stage": "join"}
    assert summary["run"]["input_topics"] == list(run.input_topics)
    for name in ("summary.json", "timeseries.csv", "report.md"):
        assert (tmp_path / name).stat().st_size > 0
    assert not list(tmp_path.glob("*.png"))
    with pytest.raises(EvaluationError, match="never overwritten"):
        evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path)


@pytest.fixture
def ingest_run(kafka_bootstrap, unique):
    """Ingest outputs embedding their input (one malformed); the first one missing."""
    speed, out = f"ingest-speed-{unique}", f"ingest-out-{unique}"
    create_topics(kafka_bootstrap, [speed, out])
    values = [json.dumps(_input("L", 1, sec, s.SPEED)).encode() for sec in range(4)]
    values.insert(2, b'{"location_id": "L", broken')
    _produce(kafka_bootstrap, speed, values)
    inputs = _read_back(kafka_bootstrap, speed, len(values))
    outputs = []
    for partition, offset, stamp, value in inputs:
        head = {s.RUN_ID: unique, s.INPUT_TS_LATEST: stamp, s.INPUT_TS_EARLIEST: stamp,
                s.INPUT_COUNT: 1, s.SOURCE_TOPIC: speed, s.SOURCE_PARTITION: partition,
                s.SOURCE_OFFSET: offset}  # fmt: skip
        outputs.append(json.dumps(head)[:-1].encode() + b', "record": ' + value + b"}")
    _produce(kafka_bootstrap, out, outputs[1:])
    out_recs = _read_back(kafka_bootstrap, out, len(outputs) - 1)
    run = RunInfo(id=unique, stage="ingest", output_topic=out, input_topics=(speed,))
    return run, inputs, out_recs


def test_ingest_outputs_embedding_malformed_inputs_are_measured(
    kafka_bootstrap, ingest_run, tmp_path
):
    run, inputs, out_recs = ingest_run
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path).as_dict()
    rec = summary["records"]
    assert (rec["outputs"], rec["expected"], rec["missing"]) == (4, 5, 1)
    assert rec["malformed_outputs"] == 0 and rec["unexpected"] == 0
    got = pd.read_parquet(tmp_path / "latencies.parquet").sort_values("offset")
    want = [o[2] - i[2] for o, i in zip(out_recs, inputs[1:], strict=True)]
    assert got["latency_ms"].tolist() == want


def test_a_run_read_from_before_its_measured_period_skips_the_inputs_before(
    kafka_bootstrap, unique, tmp_path
):
    """read_before_s: the topics are read from a broker time on (Kafka's offsets for a
    time), and the outputs of the inputs before it are left out, not counted unexpected."""
    speed, out = f"late-speed-{unique}", f"late-out-{unique}"
    create_topics(kafka_bootstrap, [speed, out])
    values = [json.dumps(_input("L", 1, sec, s.SPEED)).encode() for sec in range(8)]
    _produce(kafka_bootstrap, speed, values[:4])
    time.sleep(0.05)  # the later four are stamped at least 50 ms after the first four
    _produce(kafka_bootstrap, speed, values[4:])
    inputs = _read_back(kafka_bootstrap, speed, len(values))
    outputs = []
    for partition, offset, stamp, value in inputs:
        outputs.append(json.dumps({**json.loads(value), s.RUN_ID: unique, s.INPUT_TS_LATEST: stamp,
                                   s.INPUT_TS_EARLIEST: stamp, s.INPUT_COUNT: 1,
                                   s.SOURCE_TOPIC: speed, s.SOURCE_PARTITION: partition,
                                   s.SOURCE_OFFSET: offset}).encode())  # fmt: skip
    _produce(kafka_bootstrap, out, outputs)
    _read_back(kafka_bootstrap, out, len(outputs))
    start = inputs[4][2]
    assert inputs[3][2] < start - 10
    run = RunInfo(id=unique, stage="parse", output_topic=out, input_topics=(speed,),
                  start_ms=start, end_ms=inputs[-1][2])  # fmt: skip
    config = EvaluatorConfig(warmup_s=0, read_before_s=0)
    summary = evaluate(kafka_bootstrap, run, config, tmp_path).as_dict()
    rec = summary["records"]
    assert rec["inputs"] == 4 and rec["outputs_total"] == 4
    assert (rec["outputs"], rec["expected"], rec["missing"], rec["unexpected"]) == (4, 4, 0, 0)
    assert summary["trusted"] is True, summary["warnings"]
    assert summary["evaluation"]["from_ms"] == start
    assert summary["evaluation"]["outputs_of_unread_inputs"] == 4
    assert summary["throughput"]["first_output_delay_ms"] is None
    assert "lead-in and warm-up unread" in (tmp_path / "report.md").read_text()


@pytest.fixture
def create_time_run(kafka_bootstrap, unique):
    """A parse run whose output topic is CreateTime, with one record."""
    topic = f"ct-{unique}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    config = {"message.timestamp.type": "CreateTime"}
    admin.create_topics([NewTopic(topic, 1, 1, config=config)])[topic].result(30)
    value = {s.INPUT_TS_LATEST: 1, s.INPUT_TS_EARLIEST: 1, s.INPUT_COUNT: 1, s.SOURCE_TOPIC: "x",
             s.SOURCE_PARTITION: 0, s.SOURCE_OFFSET: 0}  # fmt: skip
    _produce(kafka_bootstrap, topic, [json.dumps(value).encode()])
    return RunInfo(id=unique, stage="parse", output_topic=topic)


def test_refuses_create_time_topic_before_reading(kafka_bootstrap, create_time_run, tmp_path):
    with pytest.raises(TopicError, match="CreateTime"):
        evaluate(kafka_bootstrap, create_time_run, EvaluatorConfig(), tmp_path)


def test_refuses_records_not_stamped_by_the_broker(kafka_bootstrap, create_time_run):
    # behind the topic check: a topic switched to CreateTime after the check
    with pytest.raises(EvaluationError, match="1 of 1 records are not stamped with LogAppendTime"):
        measure_topics(kafka_bootstrap, create_time_run, EvaluatorConfig())


def test_cli_evaluates_run_dir_and_compares(kafka_bootstrap, join_run, tmp_path):
    run, written, _, _ = join_run
    run_dir = tmp_path / "run"
    # an older run's own settings: the plot switches the evaluator no longer has are left out
    save_run(replace(run, config={"evaluator": {"plots": True, "log_scale": False}}), run_dir)
    cmd = [sys.executable, "-m", "stagebench", "evaluate", str(run_dir),
           "--bootstrap", kafka_bootstrap, "--warmup-s", "0"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout.splitlines()[0])
    assert line["outputs"] == len(written) and line["missing"] == 1
    assert (run_dir / "summary.json").exists()

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and again.stderr.startswith("ERROR:")

    compare = subprocess.run(
        [sys.executable, "-m", "stagebench", "compare", str(run_dir)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert compare.returncode == 0, compare.stderr
    assert "join" in compare.stdout and "+p50: p50 minus that of the stage" in compare.stdout


def test_missing_outputs_are_located(kafka_bootstrap, join_run, ingest_run, tmp_path):
    config = EvaluatorConfig(warmup_s=0)
    joined = evaluate(kafka_bootstrap, join_run[0], config, tmp_path / "join").as_dict()
    rec = joined["records"]
    assert (rec["expected"], rec["missing"], rec["duplicates"], rec["malformed_inputs"]) == (
        join_run[3],
        1,
        1,
        2,
    )
    # the one missing output located: the pair the outputs leave out (written skips it)
    written = {(w[s.LOCATION_ID], w[s.LANE], w[s.OBSERVATION_TS]) for w in join_run[1]}
    [lost] = joined["missing"]["examples"]
    key = (lost[s.LOCATION_ID], lost[s.LANE], lost[s.OBSERVATION_TS])
    assert key not in written and key[2] >= BASE_TS
    second = lost[s.INPUT_TS_LATEST] // 1000
    assert joined["missing"] == {
        "count": 1, "spans": [[second, second, 1]], "spans_total": 1, "examples": [lost]
    }  # fmt: skip
    ingested = evaluate(kafka_bootstrap, ingest_run[0], config, tmp_path / "ingest").as_dict()
    assert (ingested["records"]["outputs"], ingested["records"]["missing"]) == (4, 1)
    _, inputs, _ = ingest_run
    partition, offset, stamp, _ = inputs[0]  # the first input's output is left out
    assert ingested["missing"]["examples"] == [
        {s.SOURCE_TOPIC: ingest_run[0].input_topics[0], s.SOURCE_PARTITION: partition,
         s.SOURCE_OFFSET: offset, s.INPUT_TS_LATEST: stamp}
    ]  # fmt: skip


@pytest.fixture
def wrong_tumbling_run(kafka_bootstrap, unique):
    """Tumbling outputs of every location-second, with seeded defects: a wrong carried
    input_ts_latest, a wrong input_count, a wrong flow_sum, a null speed_avg, one
    output twice and one no input explains."""
    speed, flow, out = f"tum-speed-{unique}", f"tum-flow-{unique}", f"tum-out-{unique}"
    create_topics(kafka_bootstrap, [speed, flow, out])
    keys = [(loc, lane, sec) for sec in range(SECONDS) for loc in LOCATIONS for lane in (1, 2)]
    # values whose sums and means are exact in binary floating point
    values = {s.SPEED: lambda lane: 80.5 + lane, s.FLOW: lambda lane: 12.0 * lane}
    stamps = {}
    for kind, topic in ((s.SPEED, speed), (s.FLOW, flow)):
        records = [{**_input(*k, kind), kind: values[kind](k[1])} for k in keys]
        _produce(kafka_bootstrap, topic, [json.dumps(r).encode() for r in records])
        for _, _, stamp, value in _read_back(kafka_bootstrap, topic, len(keys)):
            v = json.loads(value)
            stamps.setdefault((v[s.LOCATION_ID], v[s.OBSERVATION_TS]), []).append(stamp)
    written = []
    for (loc, start), ts in sorted(stamps.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        written.append(
            {s.RUN_ID: unique, s.LOCATION_ID: loc, s.WINDOW_START: start,
             s.WINDOW_END: start + 1000, s.INPUT_TS_LATEST: max(ts),
             s.INPUT_TS_EARLIEST: min(ts), s.INPUT_COUNT: 4, s.LANES_SEEN: 2,
             s.NUM_LANES: NUM_LANES, s.FLOW_SUM: 36.0, s.SPEED_AVG: 82.0}
        )  # fmt: skip
    written[1][s.INPUT_TS_LATEST] -= 1000  # a wrong clock
    written[2][s.INPUT_COUNT] = 3
    written[3][s.FLOW_SUM] = 37.0
    written[4][s.SPEED_AVG] = None
    written += [written[0], {**written[5], s.LOCATION_ID: "LOC_X"}]  # a duplicate, unexpected
    _produce(kafka_bootstrap, out, [json.dumps(w).encode() for w in written])
    run = RunInfo(id=unique, stage="tumbling", output_topic=out, input_topics=(speed, flow))
    return run, written


def test_wrong_outputs_are_named(kafka_bootstrap, wrong_tumbling_run, tmp_path):
    run, written = wrong_tumbling_run
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path).as_dict()
    rec = summary["records"]
    assert (rec["outputs"], rec["duplicates"], rec["unexpected"], rec["missing"]) == (
        len(written),
        1,
        1,
        0,
    )
    assert (rec["input_ts_mismatch"], rec["input_ts_earliest_mismatch"]) == (1, 0)
    assert (rec["input_count_mismatch"], rec["wrong_values"]) == (1, 2)
    assert summary["trusted"] is False
    wrong = summary["wrong"]
    assert list(wrong) == [s.INPUT_TS_LATEST, s.INPUT_COUNT, s.FLOW_SUM, s.SPEED_AVG]
    assert wrong[s.FLOW_SUM]["examples"] == [
        {s.LOCATION_ID: written[3][s.LOCATION_ID], s.WINDOW_START: written[3][s.WINDOW_START],
         "output": 37.0, "expected": 36.0}
    ]  # fmt: skip
    assert wrong[s.SPEED_AVG]["examples"][0]["output"] is None
    assert (
        wrong[s.INPUT_TS_LATEST]["examples"][0]["expected"] == written[1][s.INPUT_TS_LATEST] + 1000
    )
    # the wrong clock does not enter the latencies: every explained output is measured
    assert summary["latency_ms"]["count"] == len(written) - 1
    assert rec["negative"] == 0


def test_malformed_outputs_are_counted(kafka_bootstrap, unique, tmp_path):
    out = f"bad-out-{unique}"
    create_topics(kafka_bootstrap, [out])
    good = {s.RUN_ID: unique, s.LOCATION_ID: "L", s.LANE: 1, s.OBSERVATION_TS: BASE_TS,
            s.INPUT_TS_LATEST: BASE_TS, s.INPUT_TS_EARLIEST: BASE_TS - 5}  # fmt: skip
    values = [{**good, s.LANE: lane, s.INPUT_TS_LATEST: BASE_TS + lane} for lane in range(1, 5)]
    bad = [
        {**good, s.LANE: "1"},  # identity of the wrong type
        {k: v for k, v in good.items() if k != s.LOCATION_ID},  # identity missing
        {**good, s.LOCATION_ID: 7},  # a number where a string belongs
        {**good, s.INPUT_TS_EARLIEST: 1.5},  # a float where an integer belongs
    ]
    encoded = [json.dumps(v).encode() for v in values + bad] + [b'{"lane": 1, oops']
    _produce(kafka_bootstrap, out, encoded)
    run = RunInfo(id=unique, stage="join", output_topic=out)
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path).as_dict()
    assert summary["records"]["malformed_outputs"] == len(bad) + 1
    assert summary["records"]["outputs"] == len(values)


def test_reads_to_the_end_of_a_transactional_topic(kafka_bootstrap, unique):
    """The last offset is a transaction marker, not a record: reading still ends."""
    from evaluator.topics.reader import TIMESTAMP, read_topic

    topic = f"tx-{unique}"
    create_topics(kafka_bootstrap, [topic])
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": unique})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, json.dumps({s.INPUT_TS_LATEST: i}).encode())
    producer.commit_transaction(30)
    # the commit returns before the broker has written its marker; until then a committed
    # reader's end offset (the last stable offset) is 0: the topic looks empty
    probe = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": unique})
    deadline = time.monotonic() + 30
    while probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1] < 4:
        assert time.monotonic() < deadline, "the transaction's marker was never written"
        time.sleep(0.2)
    probe.close()
    # without the end detection this waits idle_timeout_s and raises EvaluationError
    frame = read_topic(kafka_bootstrap, topic, None, idle_timeout_s=20)
    assert len(frame) == 3 and frame[TIMESTAMP].gt(0).all()


def test_reading_asks_for_no_more_records_than_are_left(kafka_bootstrap, unique, monkeypatch):
    """consume() waits for as many records as it is asked for, up to its timeout: a read
    that asks for a full batch from a small topic waits the timeout out before it ends."""
    import evaluator.topics.consume
    from evaluator.topics.reader import read_topic

    asked: list[int] = []

    class Spy:
        def __init__(self, consumer: Consumer) -> None:
            self._consumer = consumer

        def __getattr__(self, name: str):
            return getattr(self._consumer, name)

        def consume(self, num_messages: int, timeout: float):
            asked.append(num_messages)
            return self._consumer.consume(num_messages=num_messages, timeout=timeout)

    consume = evaluator.topics.consume
    real = consume._consumer
    monkeypatch.setattr(consume, "_consumer", lambda bootstrap: Spy(real(bootstrap)))
    topic = f"small-{unique}"
    create_topics(kafka_bootstrap, [topic])
    _produce(
        kafka_bootstrap, topic, [json.dumps({s.INPUT_TS_LATEST: i}).encode() for i in range(5)]
    )
    frame = read_topic(kafka_bootstrap, topic, None, batch_size=50_000)
    assert len(frame) == 5
    assert asked[0] == 5 and max(asked) == 5
