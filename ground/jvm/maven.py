"""Pinned jars from Maven Central (or the repository the user names), downloaded in
Python: no Maven, no Ivy, no JVM.

A pin names one jar exactly: ``group:artifact:version`` and the SHA-1 of its jar (a pin
file holds one a line, ``#`` starts a comment). Nothing is resolved here: a pin list is a
dependency closure resolved once, beforehand, so every machine runs the jars that were
tested. :func:`resolve` downloads those of a list with urllib (which honours
``https_proxy`` and ``no_proxy``), checks each against its SHA-1 before it renames it into
``<cache>/jars/<key>/``, and writes a ``complete`` marker once all are there: a second
resolution of the same list downloads nothing, and one in another process at the same
time waits for the first (:func:`ground.paths.install_lock`).
"""

import hashlib
import http.client
import logging
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ground import envvars, files
from ground.errors import ResolveError
from ground.paths import cache_dir, install_lock

log = logging.getLogger(__name__)

CENTRAL = "https://repo1.maven.org/maven2"
"""Maven Central, where the pinned jars come from unless
:data:`ground.envvars.MAVEN_REPOSITORY` names another repository."""
TIMEOUT_S = 60.0
"""How long a connection or a read may stall before a download fails."""
_MARKER = "complete"
_CHUNK = 1 << 16
_SHA1 = re.compile(r"[0-9a-f]{40}")
_NETWORK = (urllib.error.URLError, TimeoutError, ConnectionError)


@dataclass(frozen=True)
class Pin:
    """One jar: its Maven coordinate and the SHA-1 its download must have."""

    group: str
    artifact: str
    version: str
    sha1: str

    @classmethod
    def parse(cls, line: str) -> "Pin":
        """``group:artifact:version sha1``; ResolveError if it is not that."""
        fields = line.split()
        coordinate = fields[0].split(":") if fields else []
        if len(fields) != 2 or len(coordinate) != 3 or not all(coordinate):
            raise ResolveError(f"bad pin {line!r}: expected group:artifact:version and a SHA-1")
        if not _SHA1.fullmatch(fields[1]):
            raise ResolveError(f"bad pin {line!r}: {fields[1]!r} is no SHA-1 (40 hex digits)")
        group, artifact, version = coordinate
        return cls(group, artifact, version, fields[1])

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def url(self, repository: str) -> str:
        """Where a Maven repository keeps the jar."""
        path = f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"
        return f"{repository.rstrip('/')}/{path}"


def read_pins(path: Path) -> tuple[Pin, ...]:
    """The pins of a pin file, in its order."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return tuple(Pin.parse(line) for line in lines if line)


def default_repository() -> str:
    """The repository jars are downloaded from: the user's (``STAGEBENCH_MAVEN_REPOSITORY``)
    or Maven Central."""
    return os.environ.get(envvars.MAVEN_REPOSITORY) or CENTRAL


def resolve(pins: Sequence[Pin], what: str = "jars", repository: str | None = None) -> list[Path]:
    """The jars of ``pins``, in their order: downloaded the first time (from ``repository``,
    by default :func:`default_repository`), each checked against its SHA-1, then taken from
    the cache. ResolveError naming the jar and its URL where one cannot be downloaded or is
    not the jar pinned; ``what`` names them in the progress line."""
    repository_url = repository or default_repository()
    names = [pin.file_name for pin in pins]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise ResolveError(f"more than one pin of {', '.join(twice)}")
    lines = sorted(f"{pin.coordinate} {pin.sha1}" for pin in pins)
    target = cache_dir() / "jars" / hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
    jars = [target / name for name in names]
    marker = target / _MARKER
    if marker.exists() and all(jar.exists() for jar in jars):
        return jars
    with install_lock(target):  # a second process waits, then finds the first one's jars
        _download_missing(pins, what, repository_url, target)
        files.write(marker, "".join(f"{name}\n" for name in names))
    return jars


def _download_missing(pins: Sequence[Pin], what: str, repository_url: str, target: Path) -> None:
    """Download into ``target`` each jar of ``pins`` that is not there yet with its SHA-1
    (jars of an interrupted first time, or of another process's, are not downloaded again)."""
    target.mkdir(parents=True, exist_ok=True)
    missing = [pin for pin in pins if _sha1(target / pin.file_name) != pin.sha1]
    if missing:
        count = f"{len(missing)} jar{'s' if len(missing) > 1 else ''}"
        print(
            f"Downloading {what} from {repository_url}: {count} (first time only; cached in "
            f"{target})...",
            file=sys.stderr,
            flush=True,
        )
        started, size = time.monotonic(), 0
        for pin in missing:
            size += _download(pin, pin.url(repository_url), target / pin.file_name)
        log.info(
            "downloaded %d jars, %.1f MB, in %.1f s",
            len(missing), size / 1e6, time.monotonic() - started,
        )  # fmt: skip


def classpath(jars: Sequence[Path]) -> str:
    return os.pathsep.join(str(jar) for jar in jars)


def _download(pin: Pin, url: str, dest: Path) -> int:
    """Download ``url`` to ``dest`` if its SHA-1 is the pin's; its size in bytes. Nothing
    but a checked jar ever has ``dest``'s name."""
    fd, part = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    digest, size = hashlib.sha1(usedforsecurity=False), 0
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as got:
            while chunk := got.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
        if digest.hexdigest() != pin.sha1:
            raise ResolveError(
                f"{pin.coordinate} from {url} has SHA-1 {digest.hexdigest()}, not the pinned "
                f"{pin.sha1} ({size} bytes): a corrupted download, or not the jar that was "
                "pinned; it is not used"
            )
        os.replace(part, dest)
    except urllib.error.HTTPError as err:
        raise ResolveError(f"could not download {pin.coordinate} from {url}: HTTP {err.code} "
                           f"{err.reason}") from err  # fmt: skip
    except (OSError, http.client.HTTPException) as err:  # also a full disk
        reason = err.reason if isinstance(err, urllib.error.URLError) else str(err) or repr(err)
        network = not isinstance(err, OSError) or isinstance(err, _NETWORK)
        hint = " (the repository must be reachable, directly or through https_proxy)"
        raise ResolveError(
            f"could not download {pin.coordinate} from {url}: {reason}{hint if network else ''}"
        ) from err
    finally:
        Path(part).unlink(missing_ok=True)
    return size


def _sha1(path: Path) -> str | None:
    """The SHA-1 of a file; None if there is none."""
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, lambda: hashlib.sha1(usedforsecurity=False)).hexdigest()
    except FileNotFoundError:
        return None
