"""The embedded broker's JVM processes, seen from outside: is a pid one of them, stop
them (SIGTERM, then SIGKILL after a timeout), wait until they are gone, read the tail
of a node's log. :mod:`ground.kafka.broker` supervises its nodes with these."""

import contextlib
import logging
import signal
import time
from pathlib import Path

import psutil

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 30.0
"""How long a node may take to stop after SIGTERM before it is killed."""


def terminate(procs: list[psutil.Process]) -> None:
    """SIGTERM every process at once (a cluster shuts down together), then wait; SIGKILL
    what has not stopped after :data:`STOP_TIMEOUT_S`."""
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGTERM)
    alive = wait_gone(procs, STOP_TIMEOUT_S)
    for proc in alive:
        log.warning(
            "broker pid %d did not stop within %.0f s: killing it", proc.pid, STOP_TIMEOUT_S
        )
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    wait_gone(alive, 10)


def wait_gone(procs: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Wait until every process has exited; those still alive after ``timeout_s``.

    An exited node whose parent has not reaped it yet (a zombie: the broker was started
    by another long-lived process, a test's or a runner's) has stopped too, though its
    pid still exists; ``psutil.wait_procs`` would wait for it to the timeout.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [proc for proc in procs if _alive(proc)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.1)


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def is_embedded_broker(pid: int, config: Path) -> bool:
    """True when ``pid`` is a live broker JVM started by
    :class:`ground.kafka.broker.EmbeddedBroker` on the node configuration ``config``: a
    recorded pid that the system has since given to another process (another Kafka among
    them) is not the node's."""
    try:
        proc = psutil.Process(pid)
        cmdline = proc.cmdline()
        return (
            proc.is_running()
            and proc.status() != psutil.STATUS_ZOMBIE
            and "kafka.Kafka" in cmdline
            and str(config) in cmdline
        )
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` of a node's log ("" when it has none), for a failed start's error."""
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
