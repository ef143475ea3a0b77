"""A pipeline that carries the wrong clock is caught, and its latency is still measured right.

Each variant here is a real stage of :mod:`engines.spark.transforms` with one change:
the input timestamps it writes into its outputs come from another clock than
the broker's: the driver's (``current_timestamp``, what a pipeline carrying
processing time writes) or the observation time (event time). It runs as a
streaming query from the input topics to an output topic, with its inputs
published while it runs, and is then evaluated. The evaluator reads the inputs'
own broker timestamps, so it must flag every output, mark the run untrusted and
still report the true latency.
"""

import json
import time

import numpy as np
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from pyspark.sql import functions as F

from engines.config import PipelineConfig
from engines.spark import transforms
from engines.spark.sink import kafka_writer
from engines.spark.source import read_inputs
from evaluator.config import EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.model.run_info import RunInfo
from ground import contract as s
from ground.kafka.topics import create_topics
from tests.engines.spark.test_job_kafka import read_inputs as read_records
from tests.engines.spark.test_transforms import message

pytestmark = [pytest.mark.integration, pytest.mark.spark]

LOCATIONS = {f"W{i:02d}": 2 + i % 2 for i in range(6)}  # 2 or 3 lanes: 15 lanes
SECONDS = 6
TRIGGER_MS = 1000
"""Micro-batches start on whole seconds of the driver's clock (Spark aligns a
processing-time trigger to multiples of its interval)."""
SEND_AT_MS = 500
"""Each second's inputs are published half a second into it: half a second from both
its observation time and the next batch's start, so neither wrong clock can equal the
broker's append time by chance."""
WAIT_S = 120


def driver_clock_ingest(raw):
    """Ingest carrying the driver's clock when the micro-batch started (processing time)."""
    now = F.unix_millis(F.current_timestamp())
    return (
        transforms.ingest(raw)
        .withColumn(s.INPUT_TS_LATEST, now)
        .withColumn(s.INPUT_TS_EARLIEST, now)
    )


def event_time_join(raw):
    """The join carrying each observation's event time instead of its broker timestamp."""
    parsed = transforms.parse(transforms.ingest(raw)).withColumn(
        s.INPUT_TS_LATEST, F.col(s.OBSERVATION_TS)
    )
    return transforms.join(parsed, watermark_delay_ms=1000)


VARIANTS = {"ingest": driver_clock_ingest, "join": event_time_join}


def _ready(query) -> bool:
    return query.lastProgress is not None or (
        query.status.get("message") == "Waiting for data to arrive"
    )


def _wait(condition, query, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert query.isActive, query.exception()
        assert time.monotonic() < deadline, f"{what} within {WAIT_S} s"
        time.sleep(0.2)


def _publish_second(producer: Producer, topics: dict[str, str], index: int) -> None:
    """All lanes of every location for the wall-clock second now, half a second into it."""
    now_ms = time.time() * 1000
    second_ms = int(now_ms // 1000) * 1000
    if now_ms - second_ms > SEND_AT_MS:
        second_ms += 1000
    time.sleep(max(0.0, (second_ms + SEND_AT_MS) / 1000 - time.time()))
    for location, lanes in LOCATIONS.items():
        for lane in range(1, lanes + 1):
            for kind in (s.SPEED, s.FLOW):
                m = message(kind, location, lane, index, 80.0 if kind == s.SPEED else 9.0, lanes)
                m[s.OBSERVATION_TS] = second_ms
                m[s.SCHEDULED_TS] = second_ms + SEND_AT_MS
                producer.produce(topics[kind], key=location, value=json.dumps(m))
    assert producer.flush(30) == 0


def _output_count(bootstrap: str, topic: str) -> int:
    """Records in ``topic`` now (its partitions' end offsets)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wrong-clock-count"})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in partitions
        )
    finally:
        consumer.close()


def _read(bootstrap: str, topics: list[str], want: int) -> list[tuple[tuple, int, dict]]:
    """((topic, partition, offset), broker timestamp, value) of every record, bounded wait."""
    return [
        (key, ts, json.loads(v)) for key, (ts, v) in read_records(bootstrap, topics, want).items()
    ]


def true_latest(stage: str, inputs) -> dict[tuple, int]:
    """Identity of an output -> broker timestamp of its latest input, from the input topics."""
    if stage == "ingest":
        return {identity: ts for identity, ts, _ in inputs}
    latest: dict[tuple, int] = {}
    for _, ts, m in inputs:
        key = (m[s.LOCATION_ID], m[s.LANE], m[s.OBSERVATION_TS])
        latest[key] = max(latest.get(key, ts), ts)
    return latest


def identity(stage: str, value: dict) -> tuple:
    if stage == "ingest":
        return (value[s.SOURCE_TOPIC], value[s.SOURCE_PARTITION], value[s.SOURCE_OFFSET])
    return (value[s.LOCATION_ID], value[s.LANE], value[s.OBSERVATION_TS])


@pytest.mark.parametrize("stage", list(VARIANTS))
def test_a_pipeline_carrying_the_wrong_clock_is_flagged_and_measured_right(
    kafka_bootstrap, spark, unique, tmp_path, stage
):
    topics = {s.SPEED: f"wc-speed-{unique}", s.FLOW: f"wc-flow-{unique}"}
    output = f"wc-out-{unique}"
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    create_topics(kafka_bootstrap, [output])
    config = PipelineConfig(
        stage=stage,
        output_topic=output,
        run_id=unique,
        bootstrap=kafka_bootstrap,
        checkpoint_dir=str(tmp_path / "checkpoint"),
        speed_topic=topics[s.SPEED],
        flow_topic=topics[s.FLOW],
        settings={"trigger_interval_ms": TRIGGER_MS},
    )
    query = kafka_writer(VARIANTS[stage](read_inputs(spark, config)), config).start()
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 0})
    lanes = sum(LOCATIONS.values())
    want = 2 * lanes * SECONDS if stage == "ingest" else lanes * SECONDS
    try:
        _wait(lambda: _ready(query), query, "the query did not start")
        _publish_second(producer, topics, 0)
        _wait(
            lambda: any(p.numInputRows > 0 for p in query.recentProgress),
            query,
            "the query processed no batch",
        )
        for index in range(1, SECONDS):  # published while the query runs
            _publish_second(producer, topics, index)
        _wait(
            lambda: _output_count(kafka_bootstrap, output) >= want,
            query,
            f"fewer than {want} outputs",
        )
    finally:
        query.stop()

    # the premise: every output carries a timestamp that is not its input's broker timestamp
    inputs = _read(kafka_bootstrap, list(topics.values()), 2 * lanes * SECONDS)
    outputs = _read(kafka_bootstrap, [output], want)
    truth = true_latest(stage, inputs)
    carried = {identity(stage, v): v[s.INPUT_TS_LATEST] for _, _, v in outputs}
    assert all(carried[k] != truth[k] for k in carried), "a variant carried the broker's clock"

    run = RunInfo(
        id=unique,
        stage=stage,
        output_topic=output,
        input_topics=tuple(topics.values()),
        bootstrap=kafka_bootstrap,
    )
    summary = evaluate(kafka_bootstrap, run, EvaluatorConfig(warmup_s=0), tmp_path).as_dict()

    records = summary["records"]
    assert records["outputs"] > 0
    for key in ("input_ts_mismatch", "input_ts_earliest_mismatch"):
        assert records[key] in (records["outputs"], len(outputs)), (key, records)
    assert summary["trusted"] is False
    assert any("do not trust" in w for w in summary["warnings"]), summary["warnings"]

    # the latency comes from the input topics: the true one, not the carried clock's
    period = summary["period"]
    true_latencies = [
        ts - truth[identity(stage, v)]
        for _, ts, v in outputs
        if period["measured_from_ms"] <= truth[identity(stage, v)] <= period["measured_to_ms"]
    ]
    true_p50 = float(np.percentile(true_latencies, 50))
    carried_p50 = float(np.percentile([ts - v[s.INPUT_TS_LATEST] for _, ts, v in outputs], 50))
    # by construction the wrong clock is about SEND_AT_MS off: the two can be told apart
    assert abs(carried_p50 - true_p50) > 200, (carried_p50, true_p50)
    p50 = summary["latency_ms"]["p50"]
    assert 0 < p50 < 10_000, summary["latency_ms"]  # seconds at most, even on a busy machine
    assert p50 == pytest.approx(true_p50, abs=50), (p50, true_p50, carried_p50)
