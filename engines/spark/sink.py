"""The output value (JSON) and the Kafka sink of the last stage of a run.

The sink sets no timestamp: under LogAppendTime the broker stamps each output
record, which is the end of its latency (docs/method.md#latency).
"""

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter

from engines.config import PipelineConfig
from engines.spark.settings import REAL_TIME, spark_settings
from engines.spark.source import kafka_options
from ground.contract import LOCATION_ID, RECORD, RUN_ID
from ground.kafka import MAX_MESSAGE_BYTES
from ground.stages import stage

PRODUCER_LINGER_MS = "0"
"""Send each output batch at once; the producer's default linger adds latency."""


def output_value(result: DataFrame, run_id: str) -> DataFrame:
    """``key`` (the location id where there is one) and ``value`` (JSON) of each output.

    Internal columns (``_`` prefix) are left out and null fields are written as
    ``null``. Ingest's ``record`` is spliced in as text, so the input value is
    embedded unchanged, without being parsed.
    """
    fields = [c for c in result.columns if not c.startswith("_") and c != RECORD]
    body = F.to_json(F.struct(F.lit(run_id).alias(RUN_ID), *fields), {"ignoreNullFields": "false"})
    if RECORD in result.columns:
        head = F.substr(body, F.lit(1), F.length(body) - 1)
        body = F.concat(head, F.lit(f',"{RECORD}":'), F.col(RECORD), F.lit("}"))
    key = F.col(LOCATION_ID) if LOCATION_ID in result.columns else F.lit(None).cast("string")
    return result.select(key.alias("key"), body.alias("value"))


def query_name(config: PipelineConfig) -> str:
    """The streaming query's name: unique per run, so a shared application's listener
    routes each query's events to its run (:class:`engines.spark.progress.ProgressWriter`)."""
    return f"stagebench-{config.stage}-{config.impl}-{config.run_id}"


def kafka_writer(result: DataFrame, config: PipelineConfig) -> DataStreamWriter:
    """A Kafka sink writer for ``result`` with the configured trigger and output mode."""
    writer = (
        output_value(result, config.run_id)
        .writeStream.format("kafka")
        .queryName(query_name(config))
        .option("kafka.bootstrap.servers", config.bootstrap)
        .options(**kafka_options())
        .option("kafka.linger.ms", PRODUCER_LINGER_MS)
        # ingest embeds its input: a 1 MiB input (faulty-event) makes a larger output,
        # which the producer's default (1 MiB requests) would refuse and fail the query
        .option("kafka.max.request.size", str(MAX_MESSAGE_BYTES))
        .option("topic", config.output_topic)
        .option("checkpointLocation", config.checkpoint_dir)
    )
    # append: chained stateful operators (join -> window -> window) need it; a stage
    # that writes its windows at every update, and real-time mode, need update
    real_time = config.trigger == REAL_TIME
    mode = "update" if real_time or stage(config.stage).updates else "append"
    writer = writer.outputMode(mode)
    settings = spark_settings(config)
    if real_time:
        # PySpark 4.3's overloads of trigger lack its realTime keyword
        return writer.trigger(realTime=settings.real_time_checkpoint)  # type: ignore[call-overload, no-any-return]
    return writer.trigger(processingTime=f"{settings.trigger_interval_ms} milliseconds")
