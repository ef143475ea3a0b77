"""The Kafka Streams instances of a job, for the ``instance-loss`` fault
(:class:`engines.base.PartLoss`): each instance of ``--instances`` is a JVM the job
process starts, its child; the bench kills the newest and the others take over its
tasks. Light (psutil only): the engine's record names it."""

import psutil

from ground.errors import EngineError


def pick_instance(pid: int | None, ready: str | None) -> int:
    """The newest child of the job process ``pid``; EngineError when it has none."""
    try:
        children = psutil.Process(pid).children() if pid is not None else []
    except psutil.NoSuchProcess:
        children = []
    if not children:
        raise EngineError(f"instance-loss: the job (pid {pid}) runs no engine process")
    return max(children, key=lambda child: child.create_time()).pid
