"""The processes of a Kafka that runs on this machine, so a run samples them as the broker.

A broker on this machine is either the embedded one (a ``kafka.Kafka`` JVM listening on
the bootstrap port) or a container that publishes the port (``docker-compose.yml``, a
testcontainers Kafka). A container's processes are this machine's processes too: left
out of the broker, they would count as "other processes" and make every run against
Docker warn that it measured a loaded machine. The port forwarder that Docker runs for a
published port (``docker-proxy``) carries every byte of the run's traffic, so it counts
as the broker as well. Docker is asked once per run, through its CLI, never per sample.
"""

import json
import logging
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

import psutil

from ground.kafka.ports import listener_pid

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
DOCKER_TIMEOUT_S = 5.0
BROKER_MAIN = "kafka.Kafka"


@dataclass(frozen=True)
class LocalBroker:
    """Roots of the broker's process trees on this machine, and what they are."""

    kind: Literal["embedded", "container"]
    pids: tuple[int, ...]
    containers: tuple[str, ...] = ()
    images: tuple[str, ...] = ()

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "containers": list(self.containers), "images": list(self.images)}


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    pid: int


def local_broker(bootstrap: str) -> LocalBroker | None:
    """The processes behind every address of ``bootstrap``; None unless all are here.

    A partial answer would attribute part of the broker's CPU to "other processes"
    and part to the broker, which reads as neither.
    """
    embedded: list[int] = []
    containers: dict[str, Container] = {}
    proxies: list[int] = []
    for address in bootstrap.split(","):
        host, _, port = address.strip().rpartition(":")
        if host not in LOOPBACK_HOSTS or not port.isdigit():
            return None
        pid = listener_pid(int(port))
        if pid is not None and BROKER_MAIN in _cmdline(pid):
            embedded.append(pid)
            continue
        found = published_by(int(port))
        if found is None:
            return None
        containers[found.name] = found
        if pid is not None:  # the userland proxy; with iptables alone nothing listens here
            proxies.append(pid)
    if not containers:
        return LocalBroker("embedded", tuple(embedded))
    return LocalBroker(
        "container",
        tuple(embedded + [c.pid for c in containers.values()] + proxies),
        containers=tuple(containers),
        images=tuple(sorted({c.image for c in containers.values()})),
    )


def published_by(port: int) -> Container | None:
    """The running container that publishes host ``port``, if Docker answers and has one."""
    docker = shutil.which("docker")
    if docker is None:
        return None
    try:
        ids = _docker(docker, "ps", "--quiet", "--filter", f"publish={port}").split()
        if len(ids) != 1:
            return None
        [info] = json.loads(_docker(docker, "inspect", ids[0]))
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        log.info("cannot ask Docker which container publishes port %d: %s", port, err)
        return None
    pid = info.get("State", {}).get("Pid") or 0
    if pid <= 0:
        return None
    return Container(info["Name"].lstrip("/"), info["Config"]["Image"], pid)


def _docker(docker: str, *args: str) -> str:
    return subprocess.run(
        [docker, *args], capture_output=True, text=True, check=True, timeout=DOCKER_TIMEOUT_S
    ).stdout


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []
