"""Reading the speed and flow topics with Spark's official Kafka source.

One source subscribes to both topics; ``timestamp`` is the broker's LogAppendTime
of each input record, the start of every latency (docs/method.md#clock, #latency).
"""

from pyspark.sql import DataFrame, SparkSession

from engines.config import PipelineConfig
from engines.spark.settings import spark_settings
from ground.kafka import client

RAW_COLUMNS = ("topic", "partition", "offset", "timestamp", "value")
OFFSET_RETRIES = 60
OFFSET_RETRY_INTERVAL_MS = 1000
"""Fetching the latest offsets is retried for a minute, not Spark's default three
times 10 ms: a broker restarting (a broker fault) is waited for instead of failing the
query. Reads and the sink's writes ride out the outage with the Kafka clients' own
timeouts (a minute for the consumer's API calls, two for a produced record)."""


def kafka_options() -> dict[str, str]:
    """The cluster's client properties (TLS, SASL: :mod:`ground.kafka.client`) as options
    of Spark's Kafka source and sink."""
    return {f"kafka.{key}": value for key, value in client.java_properties().items()}


def read_inputs(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    """The raw input stream: topic, partition, offset, timestamp and value of each record."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", config.bootstrap)
        .options(**kafka_options())
        .option("subscribe", f"{config.speed_topic},{config.flow_topic}")
        .option("startingOffsets", config.starting_offsets)
        .option("fetchOffset.numRetries", str(OFFSET_RETRIES))
        .option("fetchOffset.retryIntervalMs", str(OFFSET_RETRY_INTERVAL_MS))
    )
    most = spark_settings(config).max_offsets_per_trigger
    if most is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(most))
    return reader.load().select(*RAW_COLUMNS)
