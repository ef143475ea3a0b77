"""``stagebench smoke``: the whole chain in half a minute.

Broker reachable → fresh LogAppendTime topics → produce → Spark reads them
back through the Kafka connector and sees LogAppendTime (``timestampType`` 1).
"""

import time

from confluent_kafka import Producer

from ground.errors import SparkError
from ground.jvm.spark import build_session
from ground.kafka.naming import new_run_id
from ground.kafka.resolve import resolve
from ground.kafka.topics import check_topics, create_topics, delete_topics

SPARK_LOG_APPEND_TIME = 1
"""Spark's ``timestampType`` for LogAppendTime (confluent-kafka numbers it 2)."""


def spark_read_timestamps(spark, bootstrap: str, topic: str) -> list[tuple[int, int]]:
    """(timestampType, epoch ms) of every record of ``topic``, read by Spark in batch."""
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("timestampType", "CAST(unix_millis(timestamp) AS BIGINT) AS ms")
        .collect()
    )
    return [(row.timestampType, row.ms) for row in rows]


def run(args) -> int:

    began = time.monotonic()
    bootstrap = resolve(args.bootstrap)
    topic = f"stagebench-smoke-{new_run_id()}"
    create_topics(bootstrap, [topic])
    try:
        check_topics(bootstrap, [topic])
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for i in range(args.messages):
            producer.produce(topic, key=str(i).encode(), value=b'{"smoke": %d}' % i)
        if producer.flush(30):
            raise SparkError("not every smoke record was delivered within 30 s")
        print(f"Kafka at {bootstrap}: {args.messages} records written to {topic}")
        spark = build_session("stagebench-smoke", master=args.master)
        try:
            records = spark_read_timestamps(spark, bootstrap, topic)
            version = spark.version
        finally:
            spark.stop()
    finally:
        delete_topics(bootstrap, [topic])
    types = {t for t, _ in records}
    if len(records) != args.messages or types != {SPARK_LOG_APPEND_TIME}:
        raise SparkError(
            f"Spark read {len(records)} of {args.messages} records with timestamp types "
            f"{sorted(types)}; expected all LogAppendTime ({SPARK_LOG_APPEND_TIME})"
        )
    print(
        f"Spark {version} read all {len(records)} records back with LogAppendTime timestamps; "
        f"smoke test passed in {time.monotonic() - began:.1f} s"
    )
    return 0
