"""What a local run must not expose: a listening socket beyond the loopback interface, or
a secured cluster's password in a file it writes.

:func:`listening` lists the listening TCP sockets of process trees while a run's processes
live; :func:`beyond_loopback` keeps those any other machine could reach.
:func:`canary_properties` writes a ``STAGEBENCH_KAFKA_PROPERTIES`` file on PLAINTEXT that
still carries SASL credentials with a unique password (the Java clients and librdkafka
leave SASL unused on PLAINTEXT), and :func:`files_holding` finds every file under some
directories that holds it.
"""

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psutil

LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})


@dataclass(frozen=True)
class Listener:
    pid: int
    name: str
    ip: str
    port: int

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid}) on {self.ip}:{self.port}"


def listening(pids: list[int]) -> list[Listener]:
    """The listening TCP sockets of ``pids`` and every process under them."""
    procs: list[psutil.Process] = []
    for pid in pids:
        try:
            root = psutil.Process(pid)
            procs += [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
    found = set()
    for proc in procs:
        try:
            name = proc.name()
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    found.add(Listener(proc.pid, name, conn.laddr.ip, conn.laddr.port))
        except psutil.Error:  # it ended meanwhile
            continue
    return sorted(found, key=lambda listener: (listener.pid, listener.port))


def beyond_loopback(listeners: list[Listener]) -> list[str]:
    """Those of ``listeners`` bound to an address other than 127.0.0.1 or ::1."""
    return [str(listener) for listener in listeners if listener.ip not in LOOPBACK]


def canary_properties(directory: Path) -> tuple[Path, str]:
    """A properties file on PLAINTEXT with SASL/PLAIN credentials, and their password."""
    canary = f"canary-{uuid.uuid4().hex}"
    path = directory / "client.properties"
    path.write_text(
        "security.protocol=PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="bench" password="{canary}";\n'
    )
    return path, canary


def files_holding(text: str, *roots: Path, since: float = 0.0) -> list[Path]:
    """Every file under ``roots`` changed at or after ``since`` (a time.time()) whose bytes
    hold ``text``; the properties file itself is left out."""
    needle, found = text.encode(), []
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                path = Path(directory) / name
                try:
                    if name == "client.properties" or path.stat().st_mtime < since:
                        continue
                    if needle in path.read_bytes():
                        found.append(path)
                except OSError:  # gone meanwhile, or a socket
                    continue
    return found


def now() -> float:
    """A time for :func:`files_holding`'s ``since``, a second early for coarse clocks."""
    return time.time() - 1
