"""Product client (confluent-kafka) writes, independent client (kafka-python) checks."""

import time

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, TopicPartition

from ground.kafka.topics import create_topics

pytestmark = pytest.mark.integration

KAFKA_PYTHON_LOG_APPEND_TIME = 1


def read_all(bootstrap: str, topic: str, partitions: int = 1, expected: int = 0) -> list:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    records: list = []
    deadline = time.monotonic() + 20
    while len(records) < expected and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    consumer.close()
    return records


def test_roundtrip_is_stamped_by_the_broker(kafka_bootstrap, unique):
    topic = f"roundtrip-{unique}"
    create_topics(kafka_bootstrap, [topic], partitions=3)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 0})
    before_ms = int(time.time() * 1000)
    for i in range(300):
        # a CreateTime stamp far in the past: the broker must replace it
        producer.produce(topic, key=str(i % 7).encode(), value=b"v%d" % i, timestamp=1_000)
    assert producer.flush(20) == 0
    after_ms = int(time.time() * 1000)

    records = read_all(kafka_bootstrap, topic, partitions=3, expected=300)
    assert len(records) == 300
    assert {r.timestamp_type for r in records} == {KAFKA_PYTHON_LOG_APPEND_TIME}
    # the broker replaced our CreateTime of 1 000 ms with its own clock; a broker on
    # another host may disagree with ours by a little, never by a minute
    assert all(before_ms - 60_000 <= r.timestamp <= after_ms + 60_000 for r in records)
