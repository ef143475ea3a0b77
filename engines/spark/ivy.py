"""Resolving Maven artifacts with the Ivy jar that PySpark ships: the Kafka connector's.

Its closure depends on the installed PySpark's release, so it is resolved on the user's
machine, not pinned as the embedded broker's jars are (:mod:`ground.jvm.maven`). Users
need no Maven: PySpark bundles ``ivy-<version>.jar`` in ``pyspark/jars``,
which runs standalone and resolves from Maven Central by default. Resolved
jars are copied into ``<cache>/jars/<key>/`` and listed in a ``complete``
marker, so a second resolution of the same coordinates starts no JVM and
downloads nothing.
"""

import hashlib
import logging
import re
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

from engines.spark import pyspark_jars
from ground import files
from ground.errors import ResolveError
from ground.jvm.java import java_executable
from ground.paths import cache_dir, install_lock

log = logging.getLogger(__name__)

_MARKER = "complete"
_UNREACHED = re.compile(
    r"server access error|SERVER ERROR|Host \S+ not found|proxy requires authentication",
    re.IGNORECASE,
)
"""What Ivy says of a repository it could not ask (then it reports the module "not found"
too)."""


class NotPublished(ResolveError):
    """Ivy asked every repository and none has the module."""


def not_published(output: str, coordinate: str) -> bool:
    """Whether Ivy's ``output`` of a failed resolution says for certain that ``coordinate``
    is in none of its repositories: the module is "not found" and every repository was
    reached (a network error, a proxy or a server error leaves it unknown)."""
    group, artifact, version = parse_coordinate(coordinate)
    return f"{group}#{artifact};{version}: not found" in output and not _UNREACHED.search(output)


def pyspark_ivy_jar() -> Path:
    if (jar := pyspark_jars.find("ivy")) is None:
        raise ResolveError("PySpark's bundled Ivy jar (pyspark/jars/ivy-*.jar) was not found")
    return jar


def parse_coordinate(coordinate: str) -> tuple[str, str, str]:
    parts = coordinate.split(":")
    if len(parts) != 3 or not all(parts):
        raise ResolveError(f"bad Maven coordinate {coordinate!r}: expected group:artifact:version")
    return parts[0], parts[1], parts[2]


def ivy_module(coordinates: list[str]) -> str:
    """An ivy.xml asking for the runtime closure of ``coordinates``."""
    deps = "\n".join(
        f"    <dependency org={quoteattr(g)} name={quoteattr(a)} rev={quoteattr(v)}"
        ' conf="default->default"/>'
        for g, a, v in map(parse_coordinate, coordinates)
    )
    return (
        '<ivy-module version="2.0">\n'
        '  <info organisation="stagebench" module="resolve"/>\n'
        '  <configurations><conf name="default"/></configurations>\n'
        f"  <dependencies>\n{deps}\n  </dependencies>\n"
        "</ivy-module>\n"
    )


def resolve(coordinates: list[str]) -> list[Path]:
    """Jars of ``coordinates`` with their runtime dependencies, resolved once and cached;
    NotPublished when Ivy says for certain that a repository has none of them
    (:func:`not_published`), ResolveError on any other failure."""
    key = hashlib.sha256("\n".join(sorted(coordinates)).encode()).hexdigest()[:16]
    target = cache_dir() / "jars" / key
    if (jars := _resolved(target)) is not None:
        return jars
    with install_lock(target):  # a second process waits, then takes the first one's jars
        if (jars := _resolved(target)) is not None:
            return jars
        return _retrieve(coordinates, target)


def _resolved(target: Path) -> list[Path] | None:
    """The jars a complete resolve left in ``target``; None if there is none."""
    marker = target / _MARKER
    if marker.exists():
        jars = [target / name for name in marker.read_text().split()]
        if all(jar.exists() for jar in jars):
            return jars
    return None


def _retrieve(coordinates: list[str], target: Path) -> list[Path]:
    target.mkdir(parents=True, exist_ok=True)
    files.write(target / "ivy.xml", ivy_module(coordinates))
    print(
        f"Resolving {', '.join(coordinates)} with Ivy (first time only; cached in {target})...",
        file=sys.stderr,
        flush=True,
    )
    cmd = [
        java_executable(),
        "-jar",
        str(pyspark_ivy_jar()),
        "-ivy",
        str(target / "ivy.xml"),
        "-confs",
        "default",
        "-retrieve",
        str(target / "[artifact]-[revision](-[classifier]).[ext]"),
    ]
    log.info("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        problems = [
            line.strip()
            for line in proc.stdout.splitlines()
            if "::" in line or "UNRESOLVED" in line
        ]
        detail = "; ".join(problems[-5:]) or proc.stderr.strip()[-500:]
        missing = all(not_published(proc.stdout + proc.stderr, c) for c in coordinates)
        failed = NotPublished if missing else ResolveError
        raise failed(f"Ivy could not resolve {', '.join(coordinates)}: {detail}")
    names = sorted(p.name for p in target.glob("*.jar"))
    if not names:
        raise ResolveError(f"Ivy resolved {', '.join(coordinates)} but retrieved no jar")
    files.write(target / _MARKER, "\n".join(names) + "\n")
    return [target / name for name in names]


def classpath(jars: list[Path]) -> str:
    return ":".join(str(j) for j in jars)
