"""Injecting the faults of :mod:`stagebench.config.faults` into a run's measured period: one
action per fault (:data:`ACTIONS`: stopping the broker, killing the job or one executor),
and the window each leaves in broker time, from which the evaluator measures recovery."""

import logging
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import psutil

from evaluator.recovery.windows import Window
from ground.errors import ConfigError, EngineError
from ground.kafka.broker import EmbeddedBroker
from stagebench.config.faults import BROKER_FAULTS, PARTIAL_FAULTS, process
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.run.broker_clock import BrokerClock
from stagebench.run.health import HealthMonitor
from stagebench.run.job import Job

log = logging.getLogger(__name__)

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
FAULT_END_MARK_ATTEMPTS = 15
"""After a fault the publisher reconnects with librdkafka's backoff (up to 10 s)."""


@dataclass(frozen=True)
class Outcome:
    """What a fault's action leaves to record."""

    down_ms: int | None = None
    """When the system was down by this machine's clock (the broker's outage); None: at
    the fault's start mark."""
    detail: dict[str, Any] = field(default_factory=dict)


class FaultInjector:
    """Injects a run's fault (``run.fault``) and keeps the window it left (:attr:`faults`).

    ``wait(seconds, what)`` waits out the broker's outage while the run's health is checked.
    """

    def __init__(
        self,
        run: RunConfig,
        bootstrap: str,
        console: Console,
        engine: Job,
        health: HealthMonitor,
        clock: BrokerClock,
        wait: Callable[[float, str], None],
    ):
        self.run, self.console, self.engine, self.health = run, console, engine, health
        self.clock, self.wait = clock, wait
        self.faults: list[dict[str, Any]] = []
        # a broker fault needs a broker it can restart: refused before anything starts
        self._restartable = embedded_broker_of(bootstrap) if run.fault in BROKER_FAULTS else None

    def inject(self) -> None:
        """Inject the run's fault and record its window in broker time: from the last
        input appended before it to the first appended after the system is back (the
        broker answers again, the job runs again; instantly for a lost executor)."""
        kind = self.run.fault
        assert kind is not None, "inject() is for a fault run"
        start_ms = self.clock.mark(f"start of the {kind}")
        began = time.monotonic()
        outcome = ACTIONS[kind](self)
        back_after_ms = start_ms if outcome.down_ms is None else max(start_ms, outcome.down_ms)
        end_ms = self.clock.mark(
            f"end of the {kind}", after_ms=back_after_ms, attempts=FAULT_END_MARK_ATTEMPTS
        )
        seconds = round(time.monotonic() - began, 1)
        self.faults.append({"kind": kind, "start_ms": start_ms, "end_ms": end_ms,
                            "seconds": seconds, **outcome.detail})  # fmt: skip
        self.console.step(f"{kind} over after {seconds:g} s; measuring the recovery")

    def windows(self) -> list[Window]:
        """The faults' windows in broker time, as the evaluator judges their recovery."""
        kinds = [f["kind"] for f in self.faults]
        return [
            Window(kind, f["start_ms"], f["end_ms"], process(kind), kind in PARTIAL_FAULTS)
            for kind, f in zip(kinds, self.faults, strict=True)
        ]

    def restart_broker(self, kill: bool) -> Outcome:
        """Stop the embedded broker for ``fault_down_s``, then start it on its data; down
        from the epoch ms at which it was stopped.

        That moment is read from this machine's clock, which is the broker's: a broker
        fault is refused for any broker but the embedded one here. It bounds every append
        before the outage, including those the broker took while shutting down, after the
        fault's start mark: the window ends at the first input appended after it.
        """
        assert self._restartable is not None
        down = self.run.fault_down_s
        how = "SIGKILL" if kill else "SIGTERM"
        self.console.step(f"fault: stopping the broker ({how}) for {down:g} s")
        with self.health.broker_outage():
            self._restartable.stop_node(1, kill=kill)
            stopped_ms = int(time.time() * 1000)
            try:
                self.wait(down, "broker down")
            finally:  # an interrupted outage ends too: the broker is left as it was found
                self._restartable.start_node(1)
        return Outcome(down_ms=stopped_ms)

    def restart_engine(self) -> Outcome:
        """Kill the job's whole process group and start it again from its checkpoint."""
        self.console.step(f"fault: killing {self.engine.engine.whose} job (SIGKILL to its "
                          "process group)")  # fmt: skip
        self.engine.kill()
        with self.console.task("restarting the job from its checkpoint") as update:
            self.engine.start(self.run.ready_timeout_s, self.health.check, update, True)
        return Outcome()

    def lose_worker(self) -> Outcome:
        """Kill one executor; the master starts another."""
        app = self.engine.app_id or ""
        pid = kill_one_executor(app)
        self.console.step(f"fault: killed executor {pid} of {app}")
        return Outcome(detail={"executor_pid": pid})

    def lose_instance(self) -> Outcome:
        """Kill the newest engine process of the job (one instance of several); the job
        starts it again."""
        pid = kill_newest_child(self.engine.pid)
        self.console.step(f"fault: killed engine instance {pid} (SIGKILL)")
        return Outcome(detail={"instance_pid": pid})


ACTIONS: Final[dict[str, Callable[[FaultInjector], Outcome]]] = {
    "broker-restart": lambda injector: injector.restart_broker(kill=False),
    "broker-kill": lambda injector: injector.restart_broker(kill=True),
    "engine-restart": FaultInjector.restart_engine,
    "worker-loss": FaultInjector.lose_worker,
    "instance-loss": FaultInjector.lose_instance,
}
"""What each fault of :data:`stagebench.config.faults.FAULTS` does."""


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


def kill_newest_child(pid: int | None) -> int:
    """SIGKILL the newest child of process ``pid``; its pid. EngineError when it has none."""
    try:
        children = psutil.Process(pid).children() if pid is not None else []
    except psutil.NoSuchProcess:
        children = []
    if not children:
        raise EngineError(f"instance-loss: the job (pid {pid}) runs no engine process")
    newest = max(children, key=lambda child: child.create_time())
    newest.send_signal(signal.SIGKILL)
    log.info("instance-loss: killed %d, a child of the job %s", newest.pid, pid)
    return newest.pid


def executor_pids(app_id: str) -> list[int]:
    """Executor JVMs of Spark application ``app_id`` on this machine."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if EXECUTOR_CLASS in cmdline and app_id in cmdline:
            found.append(proc.pid)
    return sorted(found)


def kill_one_executor(app_id: str) -> int:
    """SIGKILL one executor of ``app_id``; its pid. EngineError when it has none here."""
    pids = executor_pids(app_id)
    if not pids:
        raise EngineError(
            f"worker-loss: no executor of application {app_id} runs on this machine "
            "(it needs a standalone master whose workers run here)"
        )
    psutil.Process(pids[0]).send_signal(signal.SIGKILL)
    log.info("worker-loss: killed executor %d of %s", pids[0], app_id)
    return pids[0]
