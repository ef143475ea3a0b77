"""The measured period's marks, the bursts and a fault's window are read from the broker's
clock, or the run fails loudly; a broker fault stops the broker the way its name says."""

import time
from types import SimpleNamespace

import pytest

from engines import registry
from evaluator.recovery.windows import Window
from ground.errors import BrokerError
from ground.kafka.local import LocalBroker
from publisher.config import PublisherConfig
from publisher.workload import workload
from stagebench.config.faults import FAULTS
from stagebench.run import broker_clock, health
from stagebench.run.broker_clock import BrokerClock
from stagebench.run.faults import ACTIONS, FaultInjector
from stagebench.run.health import HealthMonitor


def _clock(health_checks: list) -> BrokerClock:
    return BrokerClock("127.0.0.1:1", ["speed", "flow"], lambda: health_checks.append(1))


def test_an_unreadable_end_mark_fails_after_retries(monkeypatch):
    calls = []
    monkeypatch.setattr(broker_clock, "MARK_RETRY_S", 0)
    monkeypatch.setattr(broker_clock, "newest_timestamp", lambda *a: calls.append(a) and None)
    checks: list = []
    with pytest.raises(BrokerError, match="end of the measured period after 5 attempts"):
        _clock(checks).mark("end of the measured period")
    assert len(calls) == broker_clock.MARK_ATTEMPTS and len(checks) == broker_clock.MARK_ATTEMPTS


def test_a_mark_read_on_a_retry_is_used(monkeypatch):
    answers = iter([BrokerError("timed out"), None, 1_700_000_000_123])

    def newest(*_):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(broker_clock, "MARK_RETRY_S", 0)
    monkeypatch.setattr(broker_clock, "newest_timestamp", newest)
    assert _clock([]).mark("start") == 1_700_000_000_123


def test_bursts_are_placed_after_the_first_inputs_broker_time(monkeypatch):
    first = 1_700_000_000_123
    monkeypatch.setattr(broker_clock, "oldest_timestamp", lambda *a: first)
    monkeypatch.setattr(broker_clock, "newest_timestamp", lambda *a: first + 30_500)
    config = PublisherConfig(
        workload="periodic-burst", burst_every_s=7, burst_duration_s=0.5, duration_s=300
    )
    windows = _clock([]).bursts(workload("periodic-burst"), config)
    # due at 7, 14, 21 and 28 s of the schedule; the one at 35 s was never published
    assert windows == tuple(
        Window("burst", first + 7000 * n, first + 7000 * n + 500) for n in (1, 2, 3, 4)
    )
    assert _clock([]).bursts(workload("latency"), config) == ()


def test_every_fault_has_an_action_or_is_a_part_its_engine_picks():
    losses = {loss.name for found in registry.engines() for loss in found.losses}
    assert set(ACTIONS) | losses == set(FAULTS)
    assert not set(ACTIONS) & losses


@pytest.mark.parametrize(
    ("fault", "kill", "how"),
    [("broker-restart", False, "SIGTERM"), ("broker-kill", True, "SIGKILL")],
)
def test_a_broker_restart_stops_the_broker_cleanly_and_a_broker_kill_kills_it(
    monkeypatch, fault, kill, how
):
    calls: list[tuple] = []
    steps: list[str] = []
    marks: list[tuple[str, int | None]] = []
    stamps = iter([1_000, 2_000])

    def broker_mark(what, after_ms=None, attempts=broker_clock.MARK_ATTEMPTS):
        marks.append((what, after_ms))
        return next(stamps)

    # a fake embedded broker: how its node was stopped, and when it came back
    restartable = SimpleNamespace(
        stop_node=lambda node, kill: calls.append(("stop", node, kill)),
        start_node=lambda node: calls.append(("start", node)),
    )
    # no broker here before the fault; the embedded one's new process after it
    brokers = iter([None, LocalBroker("embedded", (4242,))])
    monkeypatch.setattr(health, "local_broker", lambda bootstrap: next(brokers))
    monkeypatch.setattr(health, "admin_client", lambda bootstrap: None)
    monitor = HealthMonitor("127.0.0.1:1", SimpleNamespace(), SimpleNamespace(), SimpleNamespace())
    injector = FaultInjector(
        SimpleNamespace(fault=fault, fault_down_s=3.0),
        SimpleNamespace(step=steps.append),
        SimpleNamespace(),
        monitor,
        SimpleNamespace(mark=broker_mark),
        lambda seconds, what: calls.append(("down", seconds, monitor._broker_down)),
        restartable,
    )
    before_ms = int(time.time() * 1000)
    injector.inject()
    # stopped as named, down for fault_down_s (the health check told), then started again
    assert calls == [("stop", 1, kill), ("down", 3.0, True), ("start", 1)]
    assert f"fault: stopping the broker ({how}) for 3 s" in steps
    assert monitor._broker_down is False and monitor.local_broker.pids == (4242,)
    # the window ends at the first input appended after the broker was down
    assert marks[0] == (f"start of the {fault}", None)
    assert marks[1][0] == f"end of the {fault}" and marks[1][1] >= before_ms
    [window] = injector.faults
    assert (window["kind"], window["start_ms"], window["end_ms"]) == (fault, 1_000, 2_000)
