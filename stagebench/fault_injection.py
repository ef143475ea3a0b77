"""Stopping a broker and killing an executor, for the faults of :mod:`stagebench.faults`."""

import logging
import signal

import psutil

from ground.errors import ConfigError, SparkError
from ground.kafka.broker import EmbeddedBroker

log = logging.getLogger(__name__)

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def embedded_broker_of(bootstrap: str) -> EmbeddedBroker:
    """The embedded single broker at ``bootstrap``; ConfigError for any other Kafka.

    Only a broker stagebench started can be stopped and started again on its data;
    on a cluster, restarting the leader would move the leaders and with them the clock.
    """
    broker = EmbeddedBroker()
    state = broker.status()
    if state is None or state.bootstrap != bootstrap:
        raise ConfigError(
            f"a broker fault restarts the embedded broker, and Kafka at {bootstrap} is not "
            "it: leave out --bootstrap (or start it with `stagebench broker start`)"
        )
    if len(state.nodes) > 1:
        raise ConfigError(
            "a broker fault restarts the one broker whose clock the run uses; on a cluster "
            "that would move the partition leaders: use a single embedded broker"
        )
    return broker


def executor_pids(app_id: str) -> list[int]:
    """Executor JVMs of Spark application ``app_id`` on this machine."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if EXECUTOR_CLASS in cmdline and app_id in cmdline:
            found.append(proc.pid)
    return sorted(found)


def kill_one_executor(app_id: str) -> int:
    """SIGKILL one executor of ``app_id``; its pid. SparkError when it has none here."""
    pids = executor_pids(app_id)
    if not pids:
        raise SparkError(
            f"worker-loss: no executor of application {app_id} runs on this machine "
            "(it needs a standalone master whose workers run here)"
        )
    psutil.Process(pids[0]).send_signal(signal.SIGKILL)
    log.info("worker-loss: killed executor %d of %s", pids[0], app_id)
    return pids[0]
