"""Spark's Kafka connector reads broker-stamped records (``stagebench smoke``'s Spark half)."""

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Producer

from engines.spark.smoke import _timestamps
from ground.kafka.topics import create_topics
from tests.stagebench.cli.test_errors import stagebench

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_spark_sees_log_append_time(kafka_bootstrap, unique, spark):
    topic = f"smoke-{unique}"
    create_topics(kafka_bootstrap, [topic], partitions=2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(50):
        producer.produce(topic, key=str(i).encode(), value=b"{}", timestamp=1_000)
    assert producer.flush(20) == 0
    records = _timestamps(spark, kafka_bootstrap, topic)
    assert len(records) == 50
    assert {t for t, _ in records} == {TIMESTAMP_LOG_APPEND_TIME}
    assert min(ms for _, ms in records) > 1_000_000_000_000  # broker time, not ours


def test_the_smoke_command_reads_its_records_back_through_the_engine(kafka_bootstrap):
    result = stagebench("smoke", "--bootstrap", kafka_bootstrap, "--messages", "20")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Spark 4." in result.stdout and "read all 20 records back" in result.stdout
