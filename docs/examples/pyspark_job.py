"""A PySpark Structured Streaming job, measured by stagebench as your own job.

It reads both input topics, keeps the speed observations, counts them per location in
1 s event-time windows, and names in each window's output the latest input it counted:

    stagebench run --job 'python docs/examples/pyspark_job.py' --duration 60
    stagebench run --job 'python docs/examples/pyspark_job.py --trigger-ms 200'

It uses no stagebench module: only PySpark, its Kafka connector from Maven Central, and
the variables stagebench sets.
"""

import argparse
import os
import signal
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--trigger-ms", type=int, default=0, help="micro-batch interval (0: at once)")
args = parser.parse_args()
bootstrap = os.environ["STAGEBENCH_BOOTSTRAP"]
scratch = Path(os.environ["STAGEBENCH_SCRATCH_DIR"])

spark = (
    SparkSession.builder.master("local[2]")
    .appName("speed-counts")
    .config("spark.jars.packages", "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
schema = T.StructType().add("location_id", T.StringType()).add("observation_ts", T.LongType())
schema = schema.add("speed", T.DoubleType())
inputs = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", os.environ["STAGEBENCH_INPUT_TOPICS"])
    .option("startingOffsets", "earliest")
    .load()
)
rows = inputs.select(
    "topic", "partition", "offset", "timestamp",
    F.from_json(F.col("value").cast("string"), schema).alias("v"),
).select("topic", "partition", "offset", "timestamp", "v.*")  # fmt: skip
speeds = rows.where(F.col("speed").isNotNull()).withColumn(
    "event_time", F.timestamp_millis("observation_ts")
)
latest = F.max_by(F.struct("topic", "partition", "offset"), F.struct("timestamp", "offset"))
counts = (
    speeds.withWatermark("event_time", "500 milliseconds")
    .groupBy(F.window("event_time", "1 second"), "location_id")
    .agg(F.count("*").alias("observations"), latest.alias("latest"))
)
value = F.to_json(
    F.struct(
        "location_id",
        F.unix_millis("window.start").alias("window_start"),
        "observations",
        # the contract: the input this output was computed from last
        F.col("latest.topic").alias("source_topic"),
        F.col("latest.partition").alias("source_partition"),
        F.col("latest.offset").alias("source_offset"),
    )
)
writer = (
    counts.select(value.alias("value"))
    .writeStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", os.environ["STAGEBENCH_OUTPUT_TOPIC"])
    .option("checkpointLocation", str(scratch / "checkpoint"))
    .outputMode("append")
)
if args.trigger_ms:
    writer = writer.trigger(processingTime=f"{args.trigger_ms} milliseconds")
query = writer.start()
Path(os.environ["STAGEBENCH_READY_FILE"]).touch()  # optional: [engine.command] ready = "file"

stopping = []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
while query.isActive and not stopping:
    time.sleep(0.2)
failure = query.exception()
query.stop()
spark.stop()
if failure is not None:
    raise SystemExit(f"the query failed: {failure}")
