"""What every result records about where it was measured (docs/method.md#reports)."""

import functools
import os
import platform
import socket
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path

import psutil

from engines import registry
from engines.base import Engine
from evaluator.model.run_info import RunMetadata
from ground.jvm.java import java_executable, java_version
from ground.kafka import KAFKA_VERSION, client
from stagebench import __version__


def _dist_version(name: str) -> str | None:
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return None


@functools.cache
def source_commit() -> str | None:
    """The git commit stagebench runs from, "-dirty" when its tree has changes: the
    history of runs tells results of one version of the pipelines from another's. None
    when stagebench is not run from a git work tree (an installed package) or git is
    missing."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=here, capture_output=True, text=True,
                              timeout=10, check=False)  # fmt: skip

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        if head.returncode != 0:
            return None
        # read-only, unlike describe --dirty, which refreshes the index
        dirty = git("diff", "--quiet", "HEAD", "--").returncode == 1
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty else "")


def versions(
    kafka: str | None = KAFKA_VERSION, engines: Sequence[Engine] | None = None
) -> dict[str, str | None]:
    """Versions of everything a latency depends on: of ``engines`` (default: all, which
    may install one), ``kafka`` None for a foreign broker."""
    return {
        "stagebench": __version__,
        "stagebench_commit": source_commit(),
        "python": platform.python_version(),
        **{
            key: value
            for found in (registry.engines() if engines is None else engines)
            for key, value in found.versions().items()
        },
        "kafka_broker": kafka,
        "confluent_kafka": _dist_version("confluent-kafka"),
        "java": str(java_version(java_executable())),
        "pandas": _dist_version("pandas"),
        "pyarrow": _dist_version("pyarrow"),
    }


def processor() -> str:
    """The processor's model name ("AMD EPYC 7B13"), as Linux reports it; elsewhere what
    Python's platform module knows (often only the architecture)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def started(embedded: bool, engine: Engine) -> RunMetadata:
    """A run's metadata as it starts: versions (of its ``engine``; the broker's of an
    ``embedded`` one only: the version of a broker we did not start is unknown to us), the
    machine, the time, and the names of a secured cluster's client properties (TLS costs
    latency)."""
    metadata: RunMetadata = {
        "versions": versions(kafka=KAFKA_VERSION if embedded else None, engines=[engine]),
        "machine": machine(),
        "started_at": datetime.now(UTC).isoformat(),
    }
    if client.properties_file():
        metadata["kafka_client"] = sorted(client.java_properties())
    return metadata


def machine() -> dict[str, object]:
    memory = psutil.virtual_memory().total
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "processor": processor(),
        "cores": os.cpu_count(),
        "memory_gb": round(memory / 1024**3, 1),
        "python_executable": sys.executable,
    }
