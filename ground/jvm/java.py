"""Finding a Java runtime: Kafka 4 and Spark 4 need Java 17 or later."""

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from ground import envvars
from ground.errors import JavaError

MIN_JAVA = 17
_INSTALL_HINT = (
    "install a Java 17+ runtime (e.g. the openjdk-17-jre-headless package) or set JAVA_HOME"
)


@functools.cache
def java_executable() -> str:
    """Path of a ``java`` of version 17 or later; JavaError otherwise."""
    home = os.environ.get(envvars.JAVA_HOME)
    candidate = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise JavaError(f"no Java runtime found: {_INSTALL_HINT}")
    version = java_version(candidate)
    if version < MIN_JAVA:
        raise JavaError(
            f"{candidate} is Java {version}; Java {MIN_JAVA}+ is needed: {_INSTALL_HINT}"
        )
    return candidate


def java_version(java: str) -> int:
    """Major version of a java executable (``java -version`` prints to stderr)."""
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except OSError as err:
        raise JavaError(f"cannot run {java}: {err}") from err
    return parse_java_version(out)


def parse_java_version(text: str) -> int:
    """``openjdk version "17.0.15"`` → 17; ``"1.8.0_392"`` → 8."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not match:
        raise JavaError(f"cannot read the Java version from: {text.strip()[:200]!r}")
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    return minor if major == 1 else major
