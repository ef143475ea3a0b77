"""Spark Structured Streaming (PySpark with ``spark-sql-kafka-0-10``): the ladder as
DataFrame transforms.

``source`` (Kafka in) → ``transforms`` / ``custom`` (ingest → parse → join → tumbling →
sliding; ``custom``: the windows in transformWithStateInPandas) → ``sink`` (Kafka out),
run by ``job`` with ``progress`` recording the query listener's events; ``server`` is the
application a suite's runs share; ``settings`` is the table ``[engine.spark]`` and the Spark
conf it makes; ``schema`` gives the message fields their Spark types, from
:mod:`ground.contract`. ``session`` starts Spark with the Kafka connector,
resolved by ``ivy`` (PySpark's own Ivy, found among the jars PySpark ships:
``pyspark_jars``), and Hadoop's local file system without a ``chmod`` fork per file
(``local_file_system``, ``LocalFileSystem.scala``). Importing this package loads no Spark.
"""

from importlib.metadata import version

from engines.base import Engine, PartLoss, Support
from engines.spark.envvars import ENVIRONMENT
from engines.spark.executors import pick_executor
from engines.spark.settings import REAL_TIME, SparkSettings
from ground.stages import PROCESSING_TIME

_BOTH = (PROCESSING_TIME, REAL_TIME)


def _versions() -> dict[str, str | None]:
    """PySpark's and its Kafka connector's (resolved on first use, then cached)."""
    from engines.spark.session import kafka_connector

    return {
        "pyspark": version("pyspark"),
        "spark_kafka_connector": kafka_connector().rsplit(":", 1)[1],
    }


def _install(settings: SparkSettings) -> None:
    """The Kafka connector's jars (PySpark is a dependency of stagebench)."""
    from engines.spark.session import connector_jars

    connector_jars()


ENGINE = Engine(
    name="spark",
    title="Spark",
    stages={
        "ingest": Support(triggers=_BOTH),
        "parse": Support(triggers=_BOTH),
        "join": Support(),
        "tumbling": Support(impls=("builtin", "custom")),
        "tumbling-union": Support(triggers=_BOTH),
        "sliding": Support(impls=("builtin", "custom")),
    },
    job="engines.spark.job",
    warmup_min_s=240.0,
    restarts=True,
    losses=(PartLoss("worker-loss", "executor", pick_executor, sampled=False),),
    drain_pause_s={REAL_TIME: 5.0},  # progress only at its checkpoint interval
    environment=ENVIRONMENT,
    session="engines.spark.server",
    settings=SparkSettings,
    versions=_versions,
    install=_install,
    event_clock="least",
    release=("pyspark", "PySpark"),
    smoke="engines.spark.smoke",
    notes={
        REAL_TIME: "join, tumbling and sliding contain the stream-stream join, which "
        "real-time mode cannot run: Spark refuses it with "
        "IDENTICAL_SOURCES_IN_UNION_NOT_SUPPORTED"
    },
)
