"""The Flink runtime: a Python environment of its own with apache-flink, and the Kafka
SQL connector jar, both installed on first use into the user cache.

apache-flink 2.2.1 pins pandas<2.3 and, through apache-beam, pyarrow<17 and numpy<2.2,
which stagebench's environment cannot hold (it needs pyarrow>=18), so the Flink job's
runner (:mod:`engines.flink.runner`) runs with the interpreter of a virtual environment
under ``<cache>/flink/flink-<version>/`` made by ``python -m venv`` and ``pip install
apache-flink==<version>`` (about 830 MB and 50 s here; pip's own index and proxy
settings apply). A ``complete`` marker is written once the install succeeded: an
interrupted one is made again from scratch. The connector comes from Maven Central
through :mod:`ground.jvm.maven`, pinned by ``connector.txt``.
"""

import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ground.errors import ResolveError
from ground.jvm import maven
from ground.paths import cache_dir, install_lock

log = logging.getLogger(__name__)

FLINK_VERSION = "2.2.1"
"""The apache-flink release: the newest with a Kafka SQL connector build (5.0.0-2.2)."""
CONNECTOR_PINS = Path(__file__).with_name("connector.txt")
RUNNER = Path(__file__).with_name("runner.py")
_MARKER = "complete"


def home() -> Path:
    """Where the Flink runtime's virtual environment is (or will be)."""
    return cache_dir() / "flink" / f"flink-{FLINK_VERSION}"


def python() -> Path:
    """The Flink runtime's interpreter, installed first if it is not there yet (one process
    at a time: a second waits for the first's install, then uses it)."""
    venv = home()
    interpreter = venv / "bin" / "python"
    if (venv / _MARKER).exists() and interpreter.exists():
        return interpreter
    with install_lock(venv):
        if not (venv / _MARKER).exists() or not interpreter.exists():
            _install(venv, interpreter)
    return interpreter


def _install(venv: Path, interpreter: Path) -> None:
    if venv.exists():
        shutil.rmtree(venv)  # a half-made environment from an interrupted install
    print(
        f"Installing apache-flink {FLINK_VERSION} into {venv} (first time only; about "
        "830 MB, a minute)...",
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    _run([sys.executable, "-m", "venv", str(venv)], "create the Flink environment")
    _run(
        [str(interpreter), "-m", "pip", "install", "--progress-bar", "off",
         f"apache-flink=={FLINK_VERSION}"],
        f"pip install apache-flink=={FLINK_VERSION}",
    )  # fmt: skip
    (venv / _MARKER).write_text(f"apache-flink=={FLINK_VERSION}\n")
    print(f"Installed apache-flink in {time.monotonic() - started:.0f} s.", file=sys.stderr)


def distribution() -> Path:
    """The Flink distribution apache-flink ships (``bin``, ``conf``, ``lib``), installed
    first if it is not there yet: its ``bin/jobmanager.sh`` and ``bin/taskmanager.sh``
    start a standalone session cluster of this version."""
    python()
    found = sorted(home().glob("lib/python*/site-packages/pyflink"))
    if not found:
        raise ResolveError(f"no pyflink package in {home()}: remove it to install it again")
    return found[0]


def connector_jars() -> list[Path]:
    """The Kafka SQL connector jar (downloaded the first time, then from the cache)."""
    return maven.resolve(maven.read_pins(CONNECTOR_PINS), "the Flink Kafka SQL connector")


def _run(cmd: list[str], what: str) -> None:
    """Run an install step, its output passed through line by line; ResolveError if it fails."""
    proc = subprocess.run(cmd, stdout=sys.stderr, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise ResolveError(f"could not {what} (exit {proc.returncode}; see the lines above)")
