"""The measured period's marks, the bursts and a fault's window are read from the broker's
clock, or the run fails loudly; a broker fault stops the broker the way its name says."""

import time
from types import SimpleNamespace

import pytest

from evaluator.recovery import Window
from ground.errors import BrokerError
from ground.kafka.local import LocalBroker
from publisher.config import PublisherConfig
from publisher.workload import workload
from stagebench import runner


def _runner(health_checks: list) -> SimpleNamespace:
    return SimpleNamespace(
        bootstrap="127.0.0.1:1",
        topics=SimpleNamespace(inputs=["speed", "flow"]),
        _check_health=lambda: health_checks.append(1),
    )


def test_an_unreadable_end_mark_fails_after_retries(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "MARK_RETRY_S", 0)
    monkeypatch.setattr(runner, "newest_timestamp", lambda *a: calls.append(a) and None)
    health: list = []
    with pytest.raises(BrokerError, match="end of the measured period after 5 attempts"):
        runner.Run._broker_mark(_runner(health), "end of the measured period")
    assert len(calls) == runner.MARK_ATTEMPTS and len(health) == runner.MARK_ATTEMPTS


def test_a_mark_read_on_a_retry_is_used(monkeypatch):
    answers = iter([BrokerError("timed out"), None, 1_700_000_000_123])

    def newest(*_):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(runner, "MARK_RETRY_S", 0)
    monkeypatch.setattr(runner, "newest_timestamp", newest)
    assert runner.Run._broker_mark(_runner([]), "start") == 1_700_000_000_123


def test_bursts_are_placed_after_the_first_inputs_broker_time(monkeypatch):
    first = 1_700_000_000_123
    monkeypatch.setattr(runner, "oldest_timestamp", lambda *a: first)
    monkeypatch.setattr(runner, "newest_timestamp", lambda *a: first + 30_500)
    config = PublisherConfig(
        workload="periodic-burst", burst_every_s=7, burst_duration_s=0.5, duration_s=300
    )
    run = SimpleNamespace(
        **vars(_runner([])), workload=workload("periodic-burst"), publisher=config
    )
    windows = runner.Run._bursts(run)
    # due at 7, 14, 21 and 28 s of the schedule; the one at 35 s was never published
    assert windows == tuple(
        Window("burst", first + 7000 * n, first + 7000 * n + 500) for n in (1, 2, 3, 4)
    )
    run.workload = workload("latency")
    assert runner.Run._bursts(run) == ()


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

    def broker_mark(what, after_ms=None, attempts=runner.MARK_ATTEMPTS):
        marks.append((what, after_ms))
        return next(stamps)

    run = SimpleNamespace(
        run=SimpleNamespace(fault=fault, fault_down_s=3.0),
        console=SimpleNamespace(step=steps.append),
        bootstrap="127.0.0.1:1",
        faults=[],
        _broker_down=False,
        _broker_mark=broker_mark,
        # a fake embedded broker: how its node was stopped, and when it came back
        _restartable=SimpleNamespace(
            stop_node=lambda node, kill: calls.append(("stop", node, kill)),
            start_node=lambda node: calls.append(("start", node)),
        ),
    )
    run._wait = lambda seconds, what: calls.append(("down", seconds, run._broker_down))
    run._restart_broker = lambda kill: runner.Run._restart_broker(run, kill)
    monkeypatch.setattr(runner, "local_broker", lambda bootstrap: LocalBroker("embedded", (4242,)))
    before_ms = int(time.time() * 1000)
    runner.Run._inject_fault(run)
    # stopped as named, down for fault_down_s (the health check told), then started again
    assert calls == [("stop", 1, kill), ("down", 3.0, True), ("start", 1)]
    assert f"fault: stopping the broker ({how}) for 3 s" in steps
    assert run._broker_down is False and run.local_broker.pids == (4242,)
    # the window ends at the first input appended after the broker was down
    assert marks[0] == (f"start of the {fault}", None)
    assert marks[1][0] == f"end of the {fault}" and marks[1][1] >= before_ms
    [window] = run.faults
    assert (window["kind"], window["start_ms"], window["end_ms"]) == (fault, 1_000, 2_000)
