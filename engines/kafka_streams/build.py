"""The Kafka Streams job's class path: its pinned jars, and its Java source compiled at first
use into the user's cache.

The jars come from Maven Central through :mod:`ground.jvm.maven` (``jars.txt``; with
``state_store = "rocksdb"`` also ``rocksdb.txt``). The source (``java/``) is compiled into
``<cache>/kafka-streams/classes-<key>``, the key a hash of the source and the pins, so a
second run compiles nothing; a second process at the same time waits for the first's
compile (:func:`ground.paths.install_lock`). The compiler is the JDK's ``javac`` beside
the Java runtime found; a runtime without one (a JRE) compiles with the Eclipse compiler
(``ecj.txt``, a pinned jar that runs on the runtime itself).
"""

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ground.errors import EngineError
from ground.jvm.java import java_executable
from ground.jvm.maven import Pin, classpath, read_pins, resolve
from ground.paths import cache_dir, install_lock

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
SOURCE = HERE / "java"
PINS = HERE / "jars.txt"
ROCKSDB_PINS = HERE / "rocksdb.txt"
ECJ_PINS = HERE / "ecj.txt"
MAIN = "stagebench.kstreams.Main"
"""The job's main class."""
RELEASE = "17"
"""The Java release the classes are compiled for: the runtime stagebench needs."""
_DONE = "complete"


def pins(state_store: str = "in-memory") -> tuple[Pin, ...]:
    """The job's jars: Kafka Streams without RocksDB, with it for ``rocksdb`` stores."""
    extra = read_pins(ROCKSDB_PINS) if state_store == "rocksdb" else ()
    return (*read_pins(PINS), *extra)


def version() -> str:
    """The pinned Kafka Streams version."""
    return next(p.version for p in read_pins(PINS) if p.artifact == "kafka-streams")


def sources() -> list[Path]:
    return sorted(SOURCE.rglob("*.java"))


def source_key() -> str:
    """A hash of the Java source and the jars it compiles against."""
    digest = hashlib.sha256()
    for path in [*sources(), PINS]:
        digest.update(str(path.relative_to(HERE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def job_classpath(state_store: str = "in-memory") -> str:
    """The job's class path: its compiled classes (compiled now, the first time) and jars."""
    jars = resolve(pins(state_store), "Kafka Streams jars")
    return classpath([compiled(jars), *jars])


def compiled(jars: list[Path], javac: Path | None = None) -> Path:
    """The directory of the job's classes, compiled against ``jars`` if not yet cached
    (with ``javac``: :func:`compiler_command`)."""
    target = cache_dir() / "kafka-streams" / f"classes-{source_key()}"
    if (target / _DONE).exists():
        return target
    with install_lock(target):  # a second process waits, then takes the first one's classes
        if not (target / _DONE).exists():
            _compile(jars, javac, target)
    return target


def _compile(jars: list[Path], javac: Path | None, target: Path) -> None:
    """Compile the job into a fresh directory beside ``target``, then rename it to
    ``target``: an interrupted compile leaves no half-made ``target``."""
    files = sources()
    command, compiler = compiler_command(javac)
    print(
        f"Compiling the Kafka Streams job ({len(files)} Java files) with {compiler} "
        f"(first time only; cached in {target})...",
        file=sys.stderr,
        flush=True,
    )
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".classes-"))
    try:
        done = subprocess.run(
            [*command, "-proc:none", "-nowarn", "-encoding", "UTF-8", "-d", str(work),
             "-cp", classpath(jars), *map(str, files)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if line.strip()), "")
            raise EngineError(f"compiling the Kafka Streams job with {compiler} failed: {first}")
        (work / _DONE).write_text(compiler + "\n")
        shutil.rmtree(target, ignore_errors=True)  # one without its marker: damaged
        os.replace(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log.info(
        "compiled the Kafka Streams job with %s in %.1f s", compiler, time.monotonic() - started
    )


def compiler_command(javac: Path | None = None) -> tuple[list[str], str]:
    """The compiler's command line up to its options, and its name: ``javac`` (the given
    one, else the JDK's beside the Java runtime), or the Eclipse compiler on the runtime
    when there is no ``javac``."""
    java = java_executable()
    found = javac or Path(java).resolve().parent / "javac"
    if found.exists():
        return [str(found), "--release", RELEASE], "javac"
    ecj = resolve(read_pins(ECJ_PINS), "the Eclipse compiler for Java")[0]
    return [java, "-jar", str(ecj), f"-{RELEASE}"], "the Eclipse compiler (ecj)"
