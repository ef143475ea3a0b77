"""The publisher against a real broker, checked from the topics' LogAppendTime.

Records are read back with kafka-python, a client independent of the
publisher's confluent-kafka, and every rate is measured from broker
timestamps, never from the publisher's own counters.
"""

import collections
import threading
import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from ground import contract as schema
from ground.kafka.topics import create_topics
from publisher.codec import check, decode
from publisher.config import PublisherConfig
from publisher.producer import publish

pytestmark = pytest.mark.integration

LOG_APPEND_TIME = 1  # kafka-python's timestamp_type
READ_TIMEOUT_S = 30.0


def read_all(bootstrap, topics, expected):
    """Every record of ``topics`` (one partition each), waiting at most READ_TIMEOUT_S."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=1000
    )
    consumer.assign([TopicPartition(t, 0) for t in topics])
    consumer.seek_to_beginning()
    records = []
    deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500, max_records=50_000).values():
                records += batch
    finally:
        consumer.close()
    return records


def per_second(records, start_ms):
    counts = collections.Counter((r.timestamp - start_ms) // 1000 for r in records)
    return [counts.get(s, 0) for s in range(max(counts) + 1)]


def run(bootstrap, unique, **settings):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    create_topics(bootstrap, [speed, flow])
    config = PublisherConfig(speed_topic=speed, flow_topic=flow, **settings)
    summary = publish(bootstrap, config)
    assert summary.delivery_errors == 0 and summary.undelivered == 0
    records = read_all(bootstrap, [speed, flow], summary.sent)
    assert len(records) == summary.sent
    assert {r.timestamp_type for r in records} == {LOG_APPEND_TIME}
    return summary, records


@pytest.mark.parametrize("rate", [400, 5000])
def test_constant_rate_is_met_and_data_is_complete(kafka_bootstrap, unique, rate):
    summary, records = run(kafka_bootstrap, unique, rate=rate, duration_s=10)
    assert summary.sent == rate * 10
    assert summary.messages == {summary.speed_topic: rate * 5, summary.flow_topic: rate * 5}

    seconds = per_second(records, summary.start_ms)
    assert len(seconds) in (10, 11)  # the last sends may be appended just after 10 s
    diagnosis = (
        f"broker per second {seconds}, publisher per second {summary.per_second_rates}, "
        f"send lag {summary.send_lag_ms} ms"
    )
    for count in seconds[1:10]:
        assert abs(count - rate) <= 0.02 * rate, diagnosis

    values = collections.defaultdict(dict)  # (location, lane, observation_ts) -> topic -> value
    seqs = collections.defaultdict(list)
    for r in records:
        assert check(r.value) == [], r.value
        m = decode(r.value)
        assert r.key.decode() == m[schema.LOCATION_ID]
        assert m[schema.OBSERVATION_TS] % 1000 == 0
        assert m[schema.OBSERVATION_TS] <= m[schema.SCHEDULED_TS]
        assert m[schema.OBSERVATION_TS] // 1000 == m[schema.SCHEDULED_TS] // 1000
        values[m[schema.LOCATION_ID], m[schema.LANE], m[schema.OBSERVATION_TS]][r.topic] = m
        seqs[r.topic, m[schema.LOCATION_ID]].append(m[schema.SEQ])
    for twins in values.values():
        assert set(twins) == {summary.speed_topic, summary.flow_topic}
        speed, flow = twins[summary.speed_topic], twins[summary.flow_topic]
        assert schema.SPEED in speed and schema.FLOW in flow
        assert speed[schema.SEQ] == flow[schema.SEQ]
    for found in seqs.values():
        assert found == list(range(len(found)))  # gap-free, in order within the partition


def test_periodic_bursts_show_in_broker_timestamps(kafka_bootstrap, unique):
    summary, records = run(
        kafka_bootstrap,
        unique,
        rate=400,
        workload="periodic-burst",
        burst_messages=4000,
        burst_every_s=3,
        burst_duration_s=0.5,
        duration_s=7,
    )
    # each burst of 4 000 is rounded up to whole locations (all lanes, both twins): 4 004
    assert summary.sent == 400 * 7 + 2 * 4004
    seconds = per_second(records, summary.start_ms)
    for second in (3, 6):
        assert seconds[second] >= 4000, seconds
    for second in (1, 2, 4, 5):
        assert abs(seconds[second] - 400) <= 20, seconds


def test_single_burst_is_a_backlog_then_a_low_rate(kafka_bootstrap, unique):
    summary, records = run(
        kafka_bootstrap,
        unique,
        rate=400,
        workload="single-burst",
        backlog_s=3,
        backlog_rate=4000,
        duration_s=6,
    )
    assert summary.sent == 3 * 4000 + 3 * 400
    seconds = per_second(records, summary.start_ms)
    for second in (1, 2):
        assert abs(seconds[second] - 4000) <= 80, seconds
    for second in (4, 5):
        assert abs(seconds[second] - 400) <= 20, seconds


def test_stop_ends_the_run_early_and_flushes(kafka_bootstrap, unique):
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    create_topics(kafka_bootstrap, [speed, flow])
    stop = threading.Event()
    snapshots = []
    timer = threading.Timer(2.5, stop.set)
    timer.start()
    began = time.monotonic()
    summary = publish(
        kafka_bootstrap,
        PublisherConfig(rate=1000, duration_s=60, speed_topic=speed, flow_topic=flow),
        stop=stop,
        progress=snapshots.append,
    )
    assert time.monotonic() - began < 10
    assert summary.stopped_early
    assert 500 <= summary.sent < 4000
    assert summary.delivered == summary.sent
    assert len(read_all(kafka_bootstrap, [speed, flow], summary.sent)) == summary.sent
    assert len(snapshots) >= 3 and snapshots[-1].sent == summary.sent


def test_message_bound_and_time_scale(kafka_bootstrap, unique):
    summary, records = run(kafka_bootstrap, unique, locations=20, time_scale=2.0, max_messages=1000)
    lanes = summary.lanes
    assert summary.target_rate == 2 * lanes * 2.0
    assert summary.sent == 1000
    ticks = {decode(r.value)[schema.OBSERVATION_TS] - summary.start_ms for r in records}
    assert ticks <= {500 * k for k in range(1000)}  # two data minutes per second
