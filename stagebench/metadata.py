"""What every result records about where it was measured (docs/method.md#reports)."""

import os
import platform
import socket
import sys
from importlib import metadata as importlib_metadata

import psutil

from ground.jvm.java import java_executable, java_version
from ground.jvm.spark import kafka_connector
from ground.kafka import KAFKA_VERSION
from stagebench import __version__


def _dist_version(name: str) -> str | None:
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return None


def versions(kafka: str | None = KAFKA_VERSION) -> dict[str, str | None]:
    """Versions of everything a latency depends on; ``kafka`` is None for a foreign broker."""
    return {
        "stagebench": __version__,
        "python": platform.python_version(),
        "pyspark": _dist_version("pyspark"),
        "spark_kafka_connector": kafka_connector().rsplit(":", 1)[1],
        "kafka_broker": kafka,
        "confluent_kafka": _dist_version("confluent-kafka"),
        "java": str(java_version(java_executable())),
        "pandas": _dist_version("pandas"),
        "pyarrow": _dist_version("pyarrow"),
    }


def machine() -> dict[str, object]:
    memory = psutil.virtual_memory().total
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "memory_gb": round(memory / 1024**3, 1),
        "python_executable": sys.executable,
    }
