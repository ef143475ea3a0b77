"""The environment variables the Spark engine reads (:attr:`engines.base.Engine.environment`;
the bench's own are in :mod:`ground.envvars`)."""

SPARK_KAFKA_VERSION = "STAGEBENCH_SPARK_KAFKA_VERSION"
"""Release of spark-sql-kafka-0-10 to use (default: the installed Spark's if published)."""

SPARK_LOCAL_IP = "SPARK_LOCAL_IP"
"""Spark's own: the address a local master's driver binds to; stagebench sets it to the
loopback address when unset (:mod:`engines.spark.session`)."""

ENVIRONMENT = {
    SPARK_KAFKA_VERSION: "release of Spark's Kafka connector to use",
    SPARK_LOCAL_IP: "Spark's own: the address a local master's driver binds to (default: "
    "the loopback address)",
}
"""Each variable, with what it does."""
