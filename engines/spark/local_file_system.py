"""Hadoop's local file system without a forked ``chmod`` per file.

Hadoop's RawLocalFileSystem sets the permissions of every file and directory it
creates through Hadoop's native library where that is loaded and, where not (PySpark
ships none), by forking ``chmod``: two processes per micro-batch of a stateless query
(its offset and commit files), six of a join (its four state stores' changelogs too),
each waited for by the micro-batch. From a JVM with a 2 GB heap on a 2-core VM a fork
took 3.9 to 4.7 ms (500 in a row, three times), ``Files.setPosixFilePermissions``
0.002 to 0.011 ms. ``LocalFileSystem.scala`` subclasses Hadoop's local file system
(RocksDB's state store casts ``FileSystem.getLocal`` to that class) with a raw file
system that makes that call, and :data:`FILE_SCHEME_CONF` makes it the ``file:``
scheme's in place of the one PySpark's jars choose, Hive's ``ProxyLocalFileSystem``,
whose one difference from Hadoop's it keeps.

The class is compiled by the Scala compiler PySpark ships, so a Java runtime is enough
(no JDK), once per source and PySpark, into the cache; the driver JVM gets it on its
class path (``spark.driver.extraClassPath``) when it starts. Only a local master runs
the tasks in that JVM: executors elsewhere could not load the class, so a cluster
keeps Hadoop's own.
"""

import functools
import hashlib
import logging
import os
import subprocess
import tempfile
from pathlib import Path

from engines.spark import pyspark_jars
from engines.spark.settings import FILE_SCHEME_CONF, FILE_SYSTEM_CLASS
from ground.errors import EngineError
from ground.jvm.java import java_executable
from ground.paths import cache_dir

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("LocalFileSystem.scala")
COMPILER = ("scala-compiler", "scala-library", "scala-reflect")
HADOOP = ("hadoop-client-api", "hadoop-client-runtime")
COMPILE_TIMEOUT_S = 300.0
DRIVER_CLASS_PATH = "spark.driver.extraClassPath"
SPARK_SUBMIT_GATEWAY = "PYSPARK_GATEWAY_PORT"
"""Set for the Python process of spark-submit, whose JVM runs before the session."""


def on_class_path(conf: dict[str, str]) -> dict[str, str]:
    """``conf`` for a session to start: where it makes the class the ``file:`` scheme's,
    with the class on the driver's class path. Where this process's JVM runs already
    (a session before, or spark-submit) its class path is fixed: the setting stays if
    that JVM can load the class, and is dropped, with a warning, if not."""
    if conf.get(FILE_SCHEME_CONF) != FILE_SYSTEM_CLASS:
        return conf
    from pyspark import SparkContext  # not at import: the pipeline's settings use the names

    if SparkContext._jvm is None and not os.environ.get(SPARK_SUBMIT_GATEWAY):
        path = [p for p in (conf.get(DRIVER_CLASS_PATH), str(classes_dir())) if p]
        return {**conf, DRIVER_CLASS_PATH: os.pathsep.join(path)}
    if SparkContext._jvm is None:
        SparkContext._ensure_initialized()  # spark-submit started the JVM: connect to it
    if _loadable(SparkContext._jvm):
        return conf
    log.warning(
        "this process's JVM started without %s on its class path (under spark-submit: "
        "--driver-class-path %s): Hadoop's local file system forks chmod for every file",
        FILE_SYSTEM_CLASS, classes_dir(),
    )  # fmt: skip
    return {key: value for key, value in conf.items() if key != FILE_SCHEME_CONF}


def _loadable(jvm: object) -> bool:
    try:
        jvm.java.lang.Class.forName(FILE_SYSTEM_CLASS)  # type: ignore[attr-defined]
    except Exception:  # py4j's Py4JJavaError: ClassNotFoundException
        return False
    return True


@functools.cache
def classes_dir() -> Path:
    """The directory of the compiled class, compiled if the cache has none yet; EngineError
    if it cannot be."""
    compiler = [_jar(name) for name in COMPILER]
    hadoop = [_jar(name) for name in HADOOP]
    key = hashlib.sha256(
        SOURCE.read_bytes() + " ".join(jar.name for jar in compiler + hadoop).encode()
    ).hexdigest()[:16]
    target = cache_dir() / "classes" / key
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("compiling %s into %s, once", SOURCE.name, target)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        out = Path(scratch) / "classes"
        out.mkdir()
        _compile(compiler, hadoop, out)
        try:
            out.rename(target)
        except OSError:
            if not target.is_dir():  # not another process that compiled it first
                raise
    return target


def _compile(compiler: list[Path], hadoop: list[Path], out: Path) -> None:
    command = [
        java_executable(), "-cp", os.pathsep.join(map(str, compiler)), "scala.tools.nsc.Main",
        "-usejavacp", "-nowarn", "-d", str(out),
        "-classpath", os.pathsep.join(map(str, hadoop)), str(SOURCE),
    ]  # fmt: skip
    hint = 'or set [engine.spark] file_permissions = "chmod" to keep Hadoop\'s own'
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise EngineError(f"could not compile {SOURCE.name}: {err}; {hint}") from err
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip()[-600:]
        raise EngineError(f"could not compile {SOURCE.name}: {output}; {hint}")


def _jar(artifact: str) -> Path:
    if (jar := pyspark_jars.find(artifact)) is None:
        raise EngineError(f"PySpark's jars have no {artifact}: is PySpark installed completely?")
    return jar
