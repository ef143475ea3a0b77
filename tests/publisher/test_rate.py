"""The publisher against a real broker, checked from the topics' LogAppendTime.

Records are read back with kafka-python, a client independent of the
publisher's confluent-kafka. Every test checks two things, both over the whole
run rather than per broker second (a busy machine shifts a few records across a
second boundary, which says nothing about the publisher):

- the schedule: the ``scheduled_ts`` every record carries, counted per second,
  is exactly the workload's (so a publisher at half the rate, or with its burst
  in the wrong seconds, fails);
- keeping to it: every record is appended no earlier than its ``scheduled_ts``,
  the median delay from schedule to append stays well under a second in every
  phase of the workload, the largest is explained by the send lag the publisher
  itself reports, and the rate from the broker's timestamps over the whole run
  is the schedule's.

Per-broker-second exactness is measured on demand by
``benchmarks/publisher_rate_accuracy.py``.
"""

import collections
import statistics
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
CLOCK_SKEW_MS = 250
"""A record appended this long before its ``scheduled_ts`` was sent early. The
broker's clock is this machine's (embedded broker, a container) or, remote, tens
of milliseconds off it, so a publisher that keeps its schedule never comes near."""
ON_TIME_MS = 500
"""Largest median delay from schedule to append, per phase of a workload: a busy
machine adds milliseconds, at worst a few hundred; a publisher at half the rate
falls seconds behind, a burst sent a second late is a second late."""
DELIVERY_MS = 2000
"""Longest time from handing a record to the client to the broker's append, on a
busy machine; beyond that, the publisher's own send-lag figure is wrong."""
RATE_TOLERANCE = 0.10
"""Whole-run rate from broker timestamps against the schedule's."""


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


def per_second(stamps, start_ms):
    """How many of ``stamps`` (epoch ms) fall in each second since ``start_ms``."""
    counts = collections.Counter((t - start_ms) // 1000 for t in stamps)
    return [counts.get(s, 0) for s in range(max(counts) + 1)]


def run(bootstrap, unique, **settings):
    """Publish with ``settings``; (summary, records, their scheduled_ts) after checking delivery."""
    speed, flow = f"speed-{unique}", f"flow-{unique}"
    create_topics(bootstrap, [speed, flow])
    config = PublisherConfig(speed_topic=speed, flow_topic=flow, **settings)
    summary = publish(bootstrap, config)
    assert summary.delivery_errors == 0 and summary.undelivered == 0
    records = read_all(bootstrap, [speed, flow], summary.sent)
    assert len(records) == summary.sent
    assert {r.timestamp_type for r in records} == {LOG_APPEND_TIME}
    scheduled = [decode(r.value)[schema.SCHEDULED_TS] for r in records]
    return summary, records, scheduled


def assert_kept_to_schedule(summary, records, scheduled, phases=((0, None),)):
    """Appended on schedule, judged over the whole run and per phase, never per broker second.

    ``phases``: (from, to) seconds of the schedule (to None: the end) whose
    median delay is checked on its own, so a burst or a backlog cannot hide in
    the rest of the run.
    """
    appended = [r.timestamp for r in records]
    delays = [a - s for a, s in zip(appended, scheduled, strict=True)]
    diagnosis = (
        f"scheduled per second {per_second(scheduled, summary.start_ms)}, broker per second "
        f"{per_second(appended, summary.start_ms)}, publisher per second "
        f"{summary.per_second_rates}, send lag {summary.send_lag_ms} ms, append - scheduled: "
        f"min {min(delays)} median {statistics.median(delays)} max {max(delays)} ms"
    )
    assert min(delays) >= -CLOCK_SKEW_MS, "appended before its schedule: " + diagnosis
    assert max(delays) <= summary.send_lag_ms["max"] + DELIVERY_MS, (
        "appended later than the publisher's send lag explains: " + diagnosis
    )
    for lo, hi in phases:
        lo_ms = summary.start_ms + 1000 * lo
        hi_ms = summary.start_ms + 1000 * hi if hi is not None else float("inf")
        phase = [d for d, s in zip(delays, scheduled, strict=True) if lo_ms <= s < hi_ms]
        assert phase, (lo, hi)
        assert statistics.median(phase) <= ON_TIME_MS, f"behind in {lo}..{hi} s: " + diagnosis
    # the rate over the whole run, each side measured between its first and last record
    broker_rate = (len(records) - 1) * 1000 / (max(appended) - min(appended))
    scheduled_rate = (len(records) - 1) * 1000 / (max(scheduled) - min(scheduled))
    assert broker_rate == pytest.approx(scheduled_rate, rel=RATE_TOLERANCE), diagnosis


@pytest.mark.parametrize("rate", [400, 5000])
def test_constant_rate_is_met_and_data_is_complete(kafka_bootstrap, unique, rate):
    summary, records, scheduled = run(kafka_bootstrap, unique, rate=rate, duration_s=10)
    assert summary.sent == rate * 10
    assert summary.messages == {summary.speed_topic: rate * 5, summary.flow_topic: rate * 5}
    assert per_second(scheduled, summary.start_ms) == [rate] * 10
    assert_kept_to_schedule(summary, records, scheduled)

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


def test_periodic_bursts_are_scheduled_and_appended_in_their_seconds(kafka_bootstrap, unique):
    summary, records, scheduled = run(
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
    assert per_second(scheduled, summary.start_ms) == [400, 400, 400, 4404, 400, 400, 4404]
    bursts = collections.Counter(
        (s - summary.start_ms) // 500 for s in scheduled if (s - summary.start_ms) % 3000 < 500
    )
    assert bursts == {0: 200, 6: 200 + 4004, 12: 200 + 4004}  # each within its half second
    # each burst on its own, and the base rate between and after them
    phases = ((0, 3), (3, 3.5), (3.5, 6), (6, 6.5), (6.5, None))
    assert_kept_to_schedule(summary, records, scheduled, phases)


def test_single_burst_is_a_backlog_then_a_low_rate(kafka_bootstrap, unique):
    summary, records, scheduled = run(
        kafka_bootstrap,
        unique,
        rate=400,
        workload="single-burst",
        backlog_s=3,
        backlog_rate=4000,
        duration_s=6,
    )
    assert summary.sent == 3 * 4000 + 3 * 400
    assert per_second(scheduled, summary.start_ms) == [4000] * 3 + [400] * 3
    assert_kept_to_schedule(summary, records, scheduled, phases=((0, 3), (3, None)))


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
    summary, records, _ = run(
        kafka_bootstrap, unique, locations=20, time_scale=2.0, max_messages=1000
    )
    lanes = summary.lanes
    assert summary.target_rate == 2 * lanes * 2.0
    assert summary.sent == 1000
    ticks = {decode(r.value)[schema.OBSERVATION_TS] - summary.start_ms for r in records}
    assert ticks <= {500 * k for k in range(1000)}  # two data minutes per second
