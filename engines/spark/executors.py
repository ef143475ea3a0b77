"""Spark's executors on this machine, for the ``worker-loss`` fault
(:class:`engines.base.PartLoss`): the bench kills the one picked here and the standalone
master starts another. Light (psutil only): the engine's record names it."""

import psutil

from ground.errors import EngineError

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
"""The main class of an executor's JVM."""


def executor_pids(app_id: str) -> list[int]:
    """Executor JVMs of Spark application ``app_id`` on this machine."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if EXECUTOR_CLASS in cmdline and app_id in cmdline:
            found.append(proc.pid)
    return sorted(found)


def pick_executor(pid: int | None, app_id: str | None) -> int:
    """One executor of the job's application ``app_id`` (its ready file holds the id; the
    job's ``pid`` is not the executors' parent: the cluster's worker is); EngineError when
    none runs here."""
    pids = executor_pids(app_id or "")
    if not pids:
        raise EngineError(
            f"worker-loss: no executor of application {app_id} runs on this machine "
            "(it needs a standalone master whose workers run here)"
        )
    return pids[0]
