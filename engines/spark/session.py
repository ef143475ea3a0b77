"""SparkSessions with the official Kafka connector matching the installed PySpark.

The connector (``spark-sql-kafka-0-10``) is not bundled with PySpark; it is
resolved with its dependencies by the Ivy that PySpark ships, once, and its jars
cached (:func:`engines.spark.ivy.resolve`); every session then names those files in
``spark.jars``. ``spark.jars.packages`` would resolve it again at every start: on a
2-core machine a session took 20 s with the packages and 10 s with the cached jars
(less what PySpark ships itself).
"""

import contextlib
import functools
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pyspark
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from engines.spark import envvars, ivy, pyspark_jars
from engines.spark.local_file_system import on_class_path
from ground import files, paths
from ground.errors import EngineError, ResolveError
from ground.jvm.java import java_executable
from ground.kafka.ports import LOOPBACK

CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"
CONNECTOR_FALLBACK = "4.2.0"
"""Connector release used when Maven Central has none of the installed PySpark's
release (there is no 4.3.0 for PySpark 4.3.0): 4.2.0 reads and writes with PySpark 4.3,
as the Spark smoke test checks on every CI run."""
RECHECK_S = 86_400.0
"""How long the fallback is used before the installed PySpark's own release is looked
for again: a connector published since is taken from the next run on."""


@functools.cache
def kafka_connector() -> str:
    """Maven coordinate of the Kafka connector: the PySpark version's where published,
    else :data:`CONNECTOR_FALLBACK` (:func:`choose_connector`)."""
    if override := os.environ.get(envvars.SPARK_KAFKA_VERSION):
        return f"{CONNECTOR}:{override}"
    return choose_connector(
        paths.cache_dir() / f"connector-for-pyspark-{pyspark.__version__}", pyspark.__version__
    )


def choose_connector(choice: Path, release: str) -> str:
    """The connector for PySpark ``release``, remembered in the file ``choice``: its own
    once found (for good); the fallback only after Ivy said for certain that there is
    none (:class:`ivy.NotPublished`), and for :data:`RECHECK_S` before it looks again.
    Any other failure (the network, a proxy) chooses nothing: it raises, or keeps a
    fallback chosen before until the next run looks again."""
    own, fallback = f"{CONNECTOR}:{release}", f"{CONNECTOR}:{CONNECTOR_FALLBACK}"
    chosen = choice.read_text().strip() if choice.is_file() else None
    if chosen == own or (chosen and time.time() - choice.stat().st_mtime < RECHECK_S):
        return chosen
    try:
        ivy.resolve([own])
        coordinate = own
    except ivy.NotPublished:
        coordinate = fallback
        if chosen is None:
            print(
                f"Spark's Kafka connector has no release {release} on the Maven repositories "
                f"(the installed PySpark's): using {CONNECTOR_FALLBACK}, which works with "
                f"PySpark {release}; stagebench looks for {release} again in a day.",
                file=sys.stderr,
                flush=True,
            )
    except ResolveError:
        if chosen is None:
            raise
        return chosen
    choice.parent.mkdir(parents=True, exist_ok=True)
    files.write(choice, coordinate + "\n")
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
    """Settings every stagebench session has; callers may override any of them. A local
    master's driver (its RPC, block manager and UI if enabled) listens on the loopback
    interface only; a cluster's executors must reach the driver, so it keeps Spark's own
    choice there (the machine's address)."""
    local = {"spark.driver.bindAddress": LOOPBACK, "spark.driver.host": LOOPBACK}
    return {
        "spark.master": master,
        "spark.jars": ",".join(str(jar) for jar in connector_jars()),
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(os.cpu_count() or 2),
        "spark.driver.memory": "2g",
        **(local if master.startswith("local") else {}),
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
        with _local_ip(master):
            spark = builder.getOrCreate()
    except (PySparkException, RuntimeError) as err:
        raise EngineError(
            f"Spark could not start (master {master}); if this is the first run, the Kafka "
            f"connector {kafka_connector()} must be downloadable by Ivy: {err}"
        ) from err
    spark.sparkContext.setLogLevel("WARN")
    return spark


@contextlib.contextmanager
def _local_ip(master: str) -> Iterator[None]:
    """``SPARK_LOCAL_IP`` set to the loopback address, unless the user set it, for the
    driver JVM a local master's session starts: Spark's UI binds to it (every interface
    without it) and reads no conf for that. Only the JVM started here sees it, not a
    standalone cluster a later process of this one starts."""
    if not master.startswith("local") or envvars.SPARK_LOCAL_IP in os.environ:
        yield
        return
    os.environ[envvars.SPARK_LOCAL_IP] = LOOPBACK
    try:
        yield
    finally:
        del os.environ[envvars.SPARK_LOCAL_IP]
