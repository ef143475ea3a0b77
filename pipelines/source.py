"""Reading the speed and flow topics with Spark's official Kafka source.

One source subscribes to both topics; ``timestamp`` is the broker's LogAppendTime
of each input record, the start of every latency (docs/method.md#clock, #latency).
"""

from pyspark.sql import DataFrame, SparkSession

from pipelines.config import PipelineConfig

RAW_COLUMNS = ("topic", "partition", "offset", "timestamp", "value")


def read_inputs(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    """The raw input stream: topic, partition, offset, timestamp and value of each record."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", config.bootstrap)
        .option("subscribe", f"{config.speed_topic},{config.flow_topic}")
        .option("startingOffsets", config.starting_offsets)
    )
    if config.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(config.max_offsets_per_trigger))
    return reader.load().select(*RAW_COLUMNS)
