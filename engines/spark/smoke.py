"""``stagebench smoke``'s Spark half: read a topic back through the Kafka connector in
batch, and see each record's timestamp type (:attr:`engines.base.Engine.smoke`)."""

from typing import Any

from engines.spark.session import build_session
from engines.spark.source import kafka_options

SPARK_TO_CONFLUENT = {0: 1, 1: 2}
"""Spark's ``timestampType`` (0 CreateTime, 1 LogAppendTime) as confluent-kafka numbers
it (1, 2)."""


def read_back(bootstrap: str, topic: str, master: str) -> tuple[list[tuple[int, int]], str]:
    """(timestamp type, epoch ms) of every record of ``topic`` read by Spark, and Spark's
    version."""
    spark = build_session("stagebench-smoke", master=master)
    try:
        return _timestamps(spark, bootstrap, topic), str(spark.version)
    finally:
        spark.stop()


def _timestamps(spark: Any, bootstrap: str, topic: str) -> list[tuple[int, int]]:
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**kafka_options())
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("timestampType", "CAST(unix_millis(timestamp) AS BIGINT) AS ms")
        .collect()
    )
    return [(SPARK_TO_CONFLUENT.get(row.timestampType, -1), row.ms) for row in rows]
