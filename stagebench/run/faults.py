"""Injecting the faults of :mod:`stagebench.config.faults` into a run's measured period: one
action per fault (:data:`ACTIONS`: stopping the broker, killing the job; the process of a
part of the job its engine picks, :class:`engines.base.PartLoss`), and the window each
leaves in broker time, from which the evaluator measures recovery."""

import logging
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import psutil

from evaluator.recovery.windows import Window
from ground.errors import ConfigError
from ground.kafka.broker import EmbeddedBroker
from stagebench.config.faults import BROKER_FAULTS, partial, process
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.run.broker_clock import BrokerClock
from stagebench.run.health import HealthMonitor
from stagebench.run.job import Job

log = logging.getLogger(__name__)

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

    What it needs, the run's composition root (:mod:`stagebench.run.root`) hands it:
    ``wait(seconds, what)`` waits out the broker's outage while the run's health is checked
    (a :class:`stagebench.run.waiting.Waiter`); ``restartable``, for a broker fault, the
    embedded broker it stops and starts (:func:`restartable_broker`).
    """

    def __init__(
        self,
        run: RunConfig,
        console: Console,
        engine: Job,
        health: HealthMonitor,
        clock: BrokerClock,
        wait: Callable[[float, str], None],
        restartable: EmbeddedBroker | None,
    ):
        self.run, self.console, self.engine, self.health = run, console, engine, health
        self.clock, self.wait, self._restartable = clock, wait, restartable
        self.faults: list[dict[str, Any]] = []

    def inject(self) -> None:
        """Inject the run's fault and record its window in broker time: from the last
        input appended before it to the first appended after the system is back (the
        broker answers again, the job runs again; instantly for a lost part of it)."""
        kind = self.run.fault
        assert kind is not None, "inject() is for a fault run"
        start_ms = self.clock.mark(f"start of the {kind}")
        began = time.monotonic()
        action = ACTIONS.get(kind)
        outcome = action(self) if action is not None else self.lose(kind)
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
        engine = self.engine.engine
        return [
            Window(f["kind"], f["start_ms"], f["end_ms"], process(f["kind"], engine),
                   partial(f["kind"], engine))
            for f in self.faults
        ]  # fmt: skip

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

    def lose(self, kind: str) -> Outcome:
        """Kill the process of a part of the job its engine picks for the fault ``kind``
        (:class:`engines.base.PartLoss`); the job replaces it."""
        loss = self.engine.engine.loss(kind)
        assert loss is not None, f"{kind} is no fault of a part of the run's job"
        pid = loss.pick(self.engine.pid, self.engine.ready_text)
        psutil.Process(pid).send_signal(signal.SIGKILL)
        log.info("%s: killed %s %d of the job %s", loss.name, loss.part, pid, self.engine.pid)
        self.console.step(f"fault: killed {loss.part} {pid} (SIGKILL)")
        return Outcome(detail={f"{loss.part}_pid": pid})


ACTIONS: Final[dict[str, Callable[[FaultInjector], Outcome]]] = {
    "broker-restart": lambda injector: injector.restart_broker(kill=False),
    "broker-kill": lambda injector: injector.restart_broker(kill=True),
    "engine-restart": FaultInjector.restart_engine,
}
"""What each fault of the broker and of a whole job does (a fault of a part of the job
is its engine's :class:`engines.base.PartLoss`)."""


def restartable_broker(run: RunConfig, bootstrap: str) -> EmbeddedBroker | None:
    """The broker a broker fault of ``run`` restarts (:func:`embedded_broker_of`); None
    for any other run. Asked before anything starts, so that a fault it cannot inject is
    refused first."""
    return embedded_broker_of(bootstrap) if run.fault in BROKER_FAULTS else None


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
