"""``suite --repeat auto``: the rounds planned after the first three, and a suite that runs
them within its budget (without Kafka)."""

import io
import json

import numpy as np
import pytest

from evaluator.comparison.compare import compare
from evaluator.comparison.increments import Resolution
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.suite import rounds as suite
from stagebench.suite.auto import plan_rounds
from tests.stagebench.suite.test_rounds import evaluated

LADDER = [("floor", "builtin"), ("ingest", "builtin"), ("parse", "builtin")]


def within(needed: int | None, ms: float = 3.0) -> Resolution:
    return Resolution(f"a +p50 of {ms}", ms, 2.0, "rounds", 3, needed)


@pytest.mark.parametrize(
    ("unresolved", "left_s", "rounds", "reason"),
    [
        ([], 10_000.0, 3, "every difference of 1 ms or more is told from noise"),
        ([within(6), within(9, 1.5)], 10_000.0, 9, "9 rounds in all, the most that 2 of the 2"),
        # 100 s a round, 250 s left: 5 rounds in all, fewer than the 6 it needs
        ([within(6)], 250.0, 3, "the budget holds 5 rounds, fewer than any difference"),
        ([within(None), within(5, 9.0)], 250.0, 5, "the most that 1 of the 2 differences"),
        ([within(None)], 10_000.0, 3, "(the smallest, a +p50 of 3.0: over 100)"),
        ([within(150)], 1e9, 3, "the budget holds 100 rounds"),
        ([within(4)], -50.0, 3, "the budget holds 3 rounds"),  # three took longer than it
    ],
)
def test_the_rounds_planned_after_three_are_the_most_that_fit_the_budget(
    unresolved, left_s, rounds, reason
):
    plan = plan_rounds(unresolved, 100.0, left_s)
    assert plan.rounds == rounds and reason in plan.reason, plan


@pytest.fixture
def noisy_runs(monkeypatch, tmp_path):
    """execute() replaced by one that writes an evaluated summary: the floor at 10 ms,
    ingest 40 ms above it, parse 2 ms above ingest, each run ±1.5 ms (seeded); and a
    clock that advances 60 s a run. Returns the stages run."""
    ran, rng, now = [], np.random.default_rng(3), [0.0]
    p50 = {"floor": 10.0, "ingest": 50.0, "parse": 52.0}

    def execute(run, settings, console, application=None):
        ran.append(run.stage)
        now[0] += 60.0
        value = p50[run.stage] + float(rng.normal(0, 1.5))
        return evaluated(tmp_path / f"run{len(ran)}-{run.stage}", run, value)

    monkeypatch.setattr(suite, "execute", execute)
    monkeypatch.setattr(suite.time, "monotonic", lambda: now[0])
    return ran


@pytest.mark.parametrize("budget_s", [3 * 180.0 + 60, 3600.0])
def test_an_auto_suite_runs_the_rounds_its_verdicts_need_within_its_budget(
    noisy_runs, tmp_path, budget_s
):
    out = io.StringIO()
    result = suite.run_suite(
        LADDER,
        None,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        Settings(),
        Console(out),
        seed=4,
        budget_s=budget_s,
    )
    doc = json.loads((result.suite_dir / "comparison.json").read_text())
    rounds = len(noisy_runs) // len(LADDER)
    assert len(noisy_runs) == rounds * len(LADDER)
    assert doc["repeat"] == rounds == len(doc["order"]["rounds"]) == len(result.order.rounds)
    assert doc["auto"]["budget_s"] == budget_s
    md = (result.suite_dir / "comparison.md").read_text()
    assert f"Rounds planned after the first 3: {doc['auto']['plan']}" in md
    if budget_s < 3600:  # three rounds of three 60 s runs leave 60 s: no fourth round
        assert rounds == 3 and doc["auto"]["plan"].startswith("the budget holds 3 rounds")
    else:  # parse's 2 ms needs more than three rounds of this spread, and gets them
        assert rounds > 3 and doc["auto"]["plan"].startswith(f"{rounds} rounds in all")
        # the verdict is made once, on every round: parse's interval narrowed
        runs = [
            (d, k)
            for r in doc["stages"]
            for d, k in zip(r["run_dirs"], r["run_rounds"], strict=True)
        ]
        first = compare([d for d, k in runs if k <= 3], rounds=[k for _, k in runs if k <= 3])
        lo, hi = first.rows[2].increment_p50_ci95_joint
        end_lo, end_hi = doc["stages"][2]["increment_p50_ci95_joint"]
        assert end_hi - end_lo < (hi - lo) / 2 and first.resolution.what == "parse/builtin +p50"
    assert f"after 3 rounds: {doc['auto']['plan']}" in out.getvalue()
