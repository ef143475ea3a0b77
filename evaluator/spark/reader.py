"""Topics read with Spark's Kafka batch source, their values parsed as the pandas reader does.

The end offsets are taken once, with :func:`evaluator.consume.end_offsets`, and
the read is cached, so every Spark action of an evaluation sees the same records.
"""

import json

import pyarrow as pa
from confluent_kafka import Consumer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from evaluator import output_fields
from evaluator.consume import end_offsets
from evaluator.reader import (
    OFFSET,
    PARTITION,
    SCALAR_FIELD,
    TIMESTAMP,
    TIMESTAMP_TYPE,
    TOPIC,
    not_log_append_time,
)
from ground.malformed_spark import valid_input

SPARK_LOG_APPEND_TIME = 1
"""The Kafka source's ``timestampType`` code for LogAppendTime (confluent-kafka uses 2)."""
NO_PARTIAL_RESULTS = {"spark.sql.json.enablePartialResults": "false"}
"""A JSON value with one mistyped field parses to nulls only (a session conf, not
a ``from_json`` option), so malformed outputs are the pandas reader's."""
VALUE = "_value"
"""The record's value, as text."""
VALID = "_valid"
"""Whether an input is valid (:func:`ground.malformed_spark.valid_input`)."""


def read_topics(spark: SparkSession, bootstrap: str, topics: tuple[str, ...]) -> DataFrame:
    """The topics up to their end offsets now, with broker ms timestamps; cached."""

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "stagebench-offsets"})
    try:
        ends = {
            t: {str(p): high for p, (_, high) in end_offsets(consumer, t).items()} for t in topics
        }
    finally:
        consumer.close()
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", ",".join(topics))
        .option("startingOffsets", "earliest")
        .option("endingOffsets", json.dumps(ends))
        .load()
        .select(
            F.col("topic").alias(TOPIC),
            F.col("partition").alias(PARTITION),
            F.col("offset").alias(OFFSET),
            F.unix_millis("timestamp").alias(TIMESTAMP),
            F.col("timestampType").alias(TIMESTAMP_TYPE),
            F.col("value").cast("string").alias(VALUE),
        )
        .cache()
    )
    counts = frame.agg(
        F.count(F.lit(1)).alias("total"),
        F.count(F.when(F.col(TIMESTAMP_TYPE) != SPARK_LOG_APPEND_TIME, 1)).alias("bad"),
    ).first()
    if counts["bad"]:
        frame.unpersist()
        raise not_log_append_time(",".join(topics), counts["bad"], counts["total"])
    return frame


def spark_type(arrow_type: pa.DataType) -> str:
    """The Spark type a field of ``arrow_type`` is read as: every integer a long, as the
    pandas reader's int64 columns hold it."""
    if pa.types.is_integer(arrow_type):
        return "bigint"
    if pa.types.is_floating(arrow_type):
        return "double"
    return "string"


def parse_values(frame: DataFrame, schema: pa.Schema, recover: bool) -> DataFrame:
    """Parse :data:`VALUE` into the schema's columns as the pandas reader does.

    A field of the wrong type nulls the whole value (``from_json`` without
    partial results, see :data:`NO_PARTIAL_RESULTS`, as the reader's ``_typed``
    refuses the record), and a string field must hold a JSON string
    (``from_json`` would turn a number into its text). ``recover`` adds the
    ingest fallback of the pandas reader (scalar fields of an invalid-JSON value).
    """

    ddl = ", ".join(f"`{f.name}` {spark_type(f.type)}" for f in schema)
    parsed = frame.withColumn("_json", F.from_json(VALUE, ddl))
    cols = []
    for f in schema:
        kind = spark_type(f.type)
        raw = F.regexp_extract(VALUE, SCALAR_FIELD.format(f.name), 1)
        col = F.col(f"_json.`{f.name}`")
        if kind == "string":
            col = F.when(raw.startswith('"'), col)
        if recover:
            if kind == "string":
                fallback = F.when(raw.startswith('"'), F.regexp_replace(raw, '^"|"$', ""))
            elif kind == "bigint":
                fallback = F.when(raw.rlike(r"^-?\d+$"), raw.try_cast(kind))
            else:
                fallback = F.when(raw.rlike(r"^-?\d"), raw.try_cast(kind))
            col = F.coalesce(col, fallback)
        cols.append(col.cast(kind).alias(f.name))
    return parsed.select(TOPIC, PARTITION, OFFSET, TIMESTAMP, VALUE, *cols)


def valid_inputs(raw: DataFrame, keep_value: bool = False) -> DataFrame:
    """Inputs parsed, with :data:`VALID`; ``keep_value``: and the value itself (its raw
    bytes: :data:`VALUE` cast to binary)."""

    parsed = parse_values(raw, output_fields.INPUT_SCHEMA, recover=False)
    parsed = parsed.withColumn(VALID, valid_input(F.col(VALUE), F.col))
    return parsed if keep_value else parsed.drop(VALUE)
