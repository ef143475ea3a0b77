"""SparkSessions with the official Kafka connector matching the installed PySpark.

The connector (``spark-sql-kafka-0-10``) is not bundled with PySpark; it is
resolved with its dependencies by the Ivy that PySpark ships, once, and its jars
cached (:func:`engines.spark.ivy.resolve`); every session then names those files in
``spark.jars``. ``spark.jars.packages`` would resolve it again at every start: on a
2-core machine a session took 20 s with the packages and 10 s with the cached jars
(less what PySpark ships itself).
"""

import functools
import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from engines.spark import ivy, pyspark_jars
from engines.spark.local_file_system import on_class_path
from ground import envvars, paths
from ground.errors import EngineError, ResolveError
from ground.jvm.java import java_executable

log = logging.getLogger(__name__)


CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
CONNECTOR_FALLBACK = "4.2.0"
"""Connector release used when Maven Central has none of the installed PySpark's
release (there is no 4.3.0 for PySpark 4.3.0): 4.2.0 reads and writes with PySpark 4.3,
as the Spark smoke test checks on every CI run."""


@functools.cache
def kafka_connector() -> str:
    """Maven coordinate of the Kafka connector: the PySpark version if published."""
    if override := os.environ.get(envvars.SPARK_KAFKA_VERSION):
        return f"{CONNECTOR}:{override}"
    choice = paths.cache_dir() / f"connector-for-pyspark-{pyspark.__version__}"
    if choice.exists():
        return choice.read_text().strip()
    try:
        ivy.resolve([f"{CONNECTOR}:{pyspark.__version__}"])
        coordinate = f"{CONNECTOR}:{pyspark.__version__}"
    except ResolveError:
        log.warning(
            "%s:%s is not published; using %s", CONNECTOR, pyspark.__version__, CONNECTOR_FALLBACK
        )
        coordinate = f"{CONNECTOR}:{CONNECTOR_FALLBACK}"
    choice.parent.mkdir(parents=True, exist_ok=True)
    choice.write_text(coordinate + "\n")
    return coordinate


def connector_jars() -> list[Path]:
    """The connector's jars, less the libraries PySpark ships itself (in any version:
    Ivy's resolution brings spark-tags 4.2.0 and a second scala-library, and two
    versions of one library on a class path leave it to chance which one loads)."""
    shipped = {_artifact(jar.name) for jar in pyspark_jars.directory().glob("*.jar")}
    return [jar for jar in ivy.resolve([kafka_connector()]) if _artifact(jar.name) not in shipped]


def _artifact(jar_name: str) -> str:
    """``spark-sql-kafka-0-10_2.13-4.2.0.jar`` → ``spark-sql-kafka-0-10_2.13``."""
    return re.sub(r"-\d[\w.]*\.jar$", "", jar_name)


def base_conf(master: str) -> dict[str, str]:
    """Settings every stagebench session has; callers may override any of them."""
    return {
        "spark.master": master,
        "spark.jars": ",".join(str(jar) for jar in connector_jars()),
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(os.cpu_count() or 2),
        "spark.driver.memory": "2g",
    }


def build_session(
    app_name: str, master: str = "local[2]", conf: Mapping[str, str] | None = None
) -> SparkSession:
    """A SparkSession for ``master`` with the Kafka connector; EngineError if it cannot start."""
    java_executable()  # a clear message instead of a gateway error when Java is missing
    # pandas-based operators start Python workers: they must use this interpreter
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    builder = SparkSession.builder.appName(app_name)
    for key, value in on_class_path({**base_conf(master), **(conf or {})}).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except (PySparkException, RuntimeError) as err:
        raise EngineError(
            f"Spark could not start (master {master}); if this is the first run, the Kafka "
            f"connector {kafka_connector()} must be downloadable by Ivy: {err}"
        ) from err
    spark.sparkContext.setLogLevel("WARN")
    return spark
