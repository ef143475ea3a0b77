"""The measured period's marks and the bursts are read from the broker's clock, or the run
fails loudly."""

from types import SimpleNamespace

import pytest

from evaluator.recovery import Window
from ground.errors import BrokerError
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
