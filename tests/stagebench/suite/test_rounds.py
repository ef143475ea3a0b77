"""A suite's rounds without Kafka: the order they run in, and what the suite records of it."""

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluator.comparison.compare import compare
from evaluator.model.record import from_dict
from evaluator.model.result import Summary
from ground import rundir
from ground.errors import StagebenchError
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.run import root as run_root
from stagebench.run import warmup as app_warmup
from stagebench.suite import rounds as suite
from stagebench.suite.order import round_orders
from tests.evaluator.summaries import summary_doc

LADDER = [("floor", "builtin"), ("ingest", "builtin"), ("join", "builtin")]


@pytest.fixture
def fake_runs(monkeypatch, tmp_path):
    """execute() replaced by one that writes an evaluated summary: p50 10, 50 and 450 ms
    for floor, ingest and join, a little more in later rounds. Returns the stages run."""
    ran = []
    p50 = {"floor": 10.0, "ingest": 50.0, "join": 450.0}

    def execute(run, settings, console, application=None):
        ran.append(run.stage)
        return evaluated(tmp_path / f"run{len(ran)}-{run.stage}", run, p50[run.stage] + len(ran))

    monkeypatch.setattr(suite, "execute", execute)
    return ran


def evaluated(run_dir: Path, run: RunConfig, p50: float) -> SimpleNamespace:
    """What execute() returns for a run of ``run``'s stage evaluated at ``p50`` (p99 twice
    that, each ±1 ms and ±2 ms), its summary.json written in ``run_dir``."""
    run_dir.mkdir()
    summary = summary_doc(
        run={"stage": run.stage, "impl": run.impl},
        latency_ms={"p50": p50, "p95": p50, "p99": 2 * p50},
        confidence={"p50": [p50 - 1, p50 + 1], "p99": [2 * p50 - 2, 2 * p50 + 2]},
        records={"missing": 0},
        trusted=True,
    )
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return SimpleNamespace(run_dir=run_dir, summary=from_dict(Summary, summary))


def test_a_suite_runs_its_rounds_in_the_recorded_order(fake_runs, tmp_path):
    out = io.StringIO()
    result = suite.run_suite(
        LADDER,
        3,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        Settings(),
        Console(out),
        seed=11,
    )
    expected = round_orders(LADDER, 3, seed=11)
    assert result.order == expected
    assert fake_runs == [stage for r in expected.rounds for stage, _ in r]
    doc = json.loads((result.suite_dir / "comparison.json").read_text())
    assert doc["order"] == expected.as_json()
    assert doc["significance"]["tests"] == 4 and doc["significance"]["correction"] == "bonferroni"
    join = doc["stages"][2]
    assert join["run_rounds"] == [1, 2, 3] and len(join["increment_p50_rounds"]) == 3
    assert join["increment_p50_method"] == "rounds"
    assert "pace_drift" in doc and "(seed 11): round 1:" in out.getvalue()
    md = (result.suite_dir / "comparison.md").read_text()
    assert "3 rounds, stages in random order per round (seed 11)" in md
    assert "holds jointly with the table's other" in md


def test_one_round_records_its_order_and_gives_no_verdict(fake_runs, tmp_path):
    result = suite.run_suite(
        LADDER,
        1,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        Settings(),
        Console(io.StringIO()),
    )
    doc = json.loads((result.suite_dir / "comparison.json").read_text())
    assert isinstance(doc["order"]["seed"], int) and len(doc["order"]["rounds"]) == 1
    assert doc["significance"]["tests"] == 0
    assert doc["significance"]["no_verdict"].startswith("fewer than 3 runs of a stage")
    assert all(r["increment_p50_significant"] is None for r in doc["stages"])
    rounds = [r["increment_p50_rounds"] for r in doc["stages"]]
    assert rounds[0] is None and [len(r) for r in rounds[1:]] == [1, 1]


def test_a_failed_run_leaves_its_round_without_that_stage_and_the_suite_goes_on(
    fake_runs, monkeypatch, tmp_path
):
    succeed, tried = suite.execute, []

    def execute(run, settings, console, application=None):
        if run.stage == "join" and fake_runs.count("join") == 1 and not tried:
            tried.append(run.stage)
            fake_runs.append("join (failed)")
            raise StagebenchError("the job exited")
        return succeed(run, settings, console)

    monkeypatch.setattr(suite, "execute", execute)
    out = io.StringIO()
    result = suite.run_suite(
        LADDER,
        3,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        Settings(),
        Console(out),
        seed=11,
    )
    assert len(fake_runs) == 9 and fake_runs.count("join (failed)") == 1
    [failed] = result.failed
    assert failed["stage"] == "join" and failed["error"] == "the job exited"
    join = result.comparison.rows[2]
    assert join.run_rounds == [r for r in (1, 2, 3) if r != failed["round"]]
    # paired by round: the round without a join has no difference
    assert len(join.increment_p50_rounds) == 2
    doc = json.loads((result.suite_dir / "comparison.json").read_text())
    assert doc["failed"] == [failed]
    assert (
        "Failed, so missing from the table: round"
        in (result.suite_dir / "comparison.md").read_text()
    )
    assert "failed: the job exited" in out.getvalue()


def test_a_suite_directory_is_compared_with_its_rounds(fake_runs, tmp_path):
    result = suite.run_suite(
        LADDER,
        3,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        Settings(),
        Console(io.StringIO()),
        seed=5,
    )
    run_dirs, rounds = rundir.ladder_runs([result.suite_dir])
    assert sorted(rounds) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    again = compare(run_dirs, rounds=rounds).rows
    assert [r.increment_p50_rounds for r in again] == [
        r.increment_p50_rounds for r in result.comparison.rows
    ]
    # run directories one by one: independent runs, no rounds
    assert rundir.ladder_runs(run_dirs) == (run_dirs, None)
    assert compare(run_dirs).rows[2].increment_p50_method == "welch"


def test_a_stage_at_real_time_runs_in_that_mode_beside_the_same_stage(monkeypatch, tmp_path):
    """``tumbling-union@real-time`` runs tumbling-union with [pipeline] trigger real-time
    (the others keep theirs), and the table keeps its row apart, over parse."""
    triggers = []

    def execute(run, settings, console, application=None):
        trigger = settings.section("pipeline").get("trigger", "processing-time")
        triggers.append((run.stage, trigger))
        run_dir = tmp_path / f"run{len(triggers)}"
        run_dir.mkdir()
        value = {"parse": 30.0, "tumbling-union": 500.0}[run.stage] / (
            10 if trigger == "real-time" else 1
        )
        summary = summary_doc(
            run={"stage": run.stage, "impl": run.impl},
            config={"pipeline": {"trigger": trigger}},
            latency_ms={"p50": value, "p95": value, "p99": value},
            records={"missing": 0}, trusted=True,
            updates={"first_update_ms": {"p50": 5.0, "p99": 9.0},
                     "per_window": {"mean": 3.0}} if run.stage != "parse" else None,
        )  # fmt: skip
        (run_dir / "summary.json").write_text(json.dumps(summary))
        return SimpleNamespace(run_dir=run_dir, summary=from_dict(Summary, summary))

    monkeypatch.setattr(suite, "execute", execute)
    stages = [("parse", "builtin"), ("tumbling-union", "builtin"),
              ("tumbling-union@real-time", "builtin")]  # fmt: skip
    settings = Settings({"engine.spark": {"shuffle_partitions": 1}}, {})
    result = suite.run_suite(
        stages,
        1,
        RunConfig(results_dir=str(tmp_path), application="per-run"),
        settings,
        Console(io.StringIO()),
    )
    assert sorted(triggers) == [("parse", "processing-time"),
                                ("tumbling-union", "processing-time"),
                                ("tumbling-union", "real-time")]  # fmt: skip
    rows = {(r.stage, r.impl): r for r in result.comparison.rows}
    assert rows.keys() == {("parse", "builtin"), ("tumbling-union", "builtin"),
                           ("tumbling-union", "builtin@real-time")}  # fmt: skip
    real_time = rows["tumbling-union", "builtin@real-time"]
    assert real_time.p50 == 50.0 and real_time.increment_over == "parse/builtin"
    assert real_time.first_update_p50 == 5.0 and real_time.updates_per_window == 3.0
    assert rows["tumbling-union", "builtin"].increment_p50 == 470.0
    md = (result.suite_dir / "comparison.md").read_text()
    assert "tumbling-union/builtin@real-time: first update p50 5" in md


class FakeApplication:
    """The shared application without Spark: it takes micro-batch runs, as the real one
    does; ``fail`` makes its start fail."""

    fail = False

    def __init__(self, app_dir, config):
        self.dir, self.closed, self.running = app_dir, False, True
        self.place = "master local[2]"

    def accepts(self, config):
        return config.trigger != "real-time"

    def start(self, timeout_s, update):
        if self.fail:
            raise StagebenchError("no Java here")

    def close(self, timeout_s):
        self.closed = True


@pytest.mark.parametrize("fail", [False, True], ids=["warmed-up", "failed-to-start"])
def test_a_suite_shares_one_warmed_up_application_or_falls_back(fake_runs, monkeypatch,
                                                                tmp_path, fail):  # fmt: skip
    """The Spark runs get the application once it has warmed up on every Spark stage
    (not the floor), and it is closed at the end; one that cannot start is closed too,
    and every run gets a job of its own."""
    made, given = [], []
    monkeypatch.setattr(run_root, "resolve", lambda bootstrap: "127.0.0.1:9092")
    monkeypatch.setattr(FakeApplication, "fail", fail)
    monkeypatch.setattr(app_warmup, "Application", lambda *a: made.append(FakeApplication(*a))
                        or made[-1])  # fmt: skip
    record = {"stages": ["join/builtin", "ingest/builtin"], "rate": 400.0, "seconds": 40.0}

    def warm_up(application, takes, bootstrap, console, build):
        assert build is run_root.warm_query
        assert [run.stage for run, _ in takes] == ["ingest", "join"]
        return record

    monkeypatch.setattr(app_warmup, "warm_up", warm_up)
    executed = suite.execute
    monkeypatch.setattr(
        suite,
        "execute",
        lambda run, settings, console, application=None: (
            given.append(application),
            executed(run, settings, console, application),
        )[1],
    )
    out = io.StringIO()
    result = suite.run_suite(LADDER, 1, RunConfig(results_dir=str(tmp_path)), Settings(),
                             Console(out), seed=3)  # fmt: skip
    (application,) = made
    assert application.closed
    # its one round in the shared application's fixed order, whatever the seed
    assert fake_runs == ["floor", "join", "ingest"] and result.order.fixed_first
    doc = json.loads((result.suite_dir / "comparison.json").read_text())
    md = (result.suite_dir / "comparison.md").read_text()
    if fail:
        assert given == [None] * 3 and doc["application"] is None
        assert "each run gets a job of its own: no Java here" in out.getvalue()
    else:
        assert given == [application] * 3 and doc["application"] == record
        assert "1 round, stages in the shared application's order (window stages" in md
        assert (
            "warmed up first: join/builtin, ingest/builtin in turn, each alone at 400 msg/s "
            "for 40 s" in md
        )
