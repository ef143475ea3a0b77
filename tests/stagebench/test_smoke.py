"""Spark's Kafka connector reads broker-stamped records."""

import pytest
from confluent_kafka import Producer

from ground.kafka.topics import create_topics
from stagebench.commands.smoke import SPARK_LOG_APPEND_TIME, spark_read_timestamps

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_spark_sees_log_append_time(kafka_bootstrap, unique, spark):
    topic = f"smoke-{unique}"
    create_topics(kafka_bootstrap, [topic], partitions=2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(50):
        producer.produce(topic, key=str(i).encode(), value=b"{}", timestamp=1_000)
    assert producer.flush(20) == 0
    records = spark_read_timestamps(spark, kafka_bootstrap, topic)
    assert len(records) == 50
    assert {t for t, _ in records} == {SPARK_LOG_APPEND_TIME}
    assert min(ms for _, ms in records) > 1_000_000_000_000  # broker time, not ours
