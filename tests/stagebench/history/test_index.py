"""The history of runs: recorded, listed, filtered, and rebuilt from the directories."""

import json
import sqlite3

import pytest

from stagebench.cli.history import parse_setting, parse_since
from stagebench.history import index as history_index
from stagebench.history.entry import read_entry
from stagebench.history.table import format_history
from tests.stagebench.cli.test_errors import stagebench
from tests.stagebench.results_dirs import make_capacity, make_run, make_suite


@pytest.fixture
def results(tmp_path, monkeypatch):
    """Three runs and a suite (of ingest and join, its four runs beside it), each recorded
    as run and suite record them; returns the results directory and what was recorded."""
    recorded = [make_run(tmp_path, stage, f"0000000{i}", seed=i)
                for i, stage in enumerate(["ingest", "join"], 1)]  # fmt: skip
    third = make_run(tmp_path / "later", "join", "00000003", seed=3)
    # later than the suite, which is stamped with the time it is made
    recorded.append(
        third.rename(tmp_path / third.name.replace("20261126T152238Z", "20300101T120000Z"))
    )
    for run_dir in recorded:
        assert history_index.record_or_warn(tmp_path, run_dir) is None
    suite_dir = make_suite(tmp_path, ["ingest", "join"], 2, monkeypatch)
    assert history_index.record_or_warn(tmp_path, suite_dir) is None
    return tmp_path, [*recorded, suite_dir]


def test_n_records_list_n_entries_and_the_same_after_the_index_is_deleted(results):
    results_dir, recorded = results
    listed = history_index.entries(results_dir)
    assert sorted(e.id for e in listed) == sorted(p.name for p in recorded)
    suite = next(e for e in listed if e.kind == "suite")
    assert [(f.stage, f.runs) for f in suite.figures] == [("ingest", 2), ("join", 2)]
    assert suite.trusted is True and suite.pace_ms == 13.2
    run = next(e for e in listed if e.kind == "run" and e.figures[0].stage == "ingest")
    assert run.figures[0].p50_ci95 is not None and run.workload == "latency"
    assert (
        run.rate == 200.0
        and run.machine == "unknown host (2 cores)"
        and run.versions["kafka_broker"] == "4.3.1"
    )
    history_index.index_path(results_dir).unlink()
    assert history_index.entries(results_dir) == listed


def test_entries_filter_by_stage_engine_time_and_setting(results):
    results_dir, _ = results
    listed = history_index.entries(results_dir)
    assert {f.engine for e in listed for f in e.figures} == {"spark"}
    assert history_index.entries(results_dir, engine="spark") == listed
    assert history_index.entries(results_dir, engine="floor") == []
    assert "engine" in format_history(listed).splitlines()[0]
    ingest = history_index.entries(results_dir, stage="ingest")
    assert [e.kind for e in ingest] == ["run", "suite"]
    assert all([f.stage for f in e.figures] == ["ingest"] for e in ingest)
    later = history_index.entries(results_dir, since=parse_since("2030-01-01T13:00+01:00"))
    assert [e.id for e in later] == ["20300101T120000Z-join-00000003"]
    assert history_index.entries(results_dir, since=parse_since("2030-01-02")) == []
    assert len(history_index.entries(results_dir, settings=[parse_setting("rate=200")])) == 4
    assert history_index.entries(results_dir, settings=[parse_setting("rate=400")]) == []
    key = [parse_setting("pipeline.watermark_delay_ms=1000")]
    assert history_index.entries(results_dir, settings=key) == history_index.entries(
        results_dir, settings=[parse_setting("watermark_delay_ms=1000.0")]
    )


def test_a_runs_recovery_after_a_fault_is_kept_in_the_index(tmp_path):
    run_dir = make_run(tmp_path, "join", "00000009", fault=True)
    history_index.record(tmp_path, run_dir)
    [entry] = history_index.entries(tmp_path)
    assert entry.figures[0].recovery == read_entry(run_dir).figures[0].recovery is not None
    assert "after a fault" in format_history([entry])


def test_a_capacity_search_is_one_entry_with_its_bracket(tmp_path):
    search = make_capacity(tmp_path)
    history_index.record(tmp_path, search)
    [entry] = history_index.entries(tmp_path)
    assert entry.kind == "capacity" and entry.capacity_bracket_mps == [200.0, 400.0]
    assert entry.warnings == ["the search stopped: budget"]
    assert "200–400 msg/s (bracket)" in format_history([entry])


def test_a_failure_to_record_is_a_warning_not_an_error(tmp_path):
    run_dir = make_run(tmp_path, "ingest", "0000000a")
    history_index.index_path(tmp_path).write_text("not a database")
    warning = history_index.record_or_warn(tmp_path, run_dir)
    assert warning is None  # an unreadable index is rebuilt
    with sqlite3.connect(history_index.index_path(tmp_path)) as db:
        assert db.execute("SELECT count(*) FROM entries").fetchone() == (1,)
    warning = history_index.record_or_warn(tmp_path / "missing", run_dir)
    assert warning.startswith(f"{run_dir} is not in the history") and "\n" not in warning


def test_the_command_lists_the_table_and_json_and_rebuilds(results):
    results_dir, _ = results
    table = stagebench("history", "--results", str(results_dir))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:4] == ["time", "(UTC)", "kind", "stage"]
    assert "4 entries" in lines and sum(line.startswith("20") for line in lines) == 4
    history_index.index_path(results_dir).unlink()
    doc = json.loads(stagebench("history", "--results", str(results_dir), "--json").stdout)
    assert [e["kind"] for e in doc].count("suite") == 1 and len(doc) == 4
    rebuilt = stagebench("history", "--results", str(results_dir), "--rebuild", "--stage", "join")
    assert rebuilt.returncode == 0 and "3 entries" in rebuilt.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--setting", "rate"], "ERROR: --setting: expected KEY=VALUE such as "
                                "trigger_interval_ms=500, got 'rate'"),
        (["--setting", "pipeline.shuffle_partitions=2"], "ERROR: [pipeline] shuffle_partitions "
                                                         "in --setting is now [engine.spark]"),
        (["--since", "last week"], "ERROR: --since: expected a date or ISO time"),
        (["--results", "/nonexistent/results"], "ERROR: --results: /nonexistent/results is "
                                                "not a directory"),
    ],
)  # fmt: skip
def test_bad_filters_are_one_error_line(tmp_path, args, message):
    result = stagebench("history", "--results", str(tmp_path), *args)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_suite_kept_with_its_runs_inside_reads_them(tmp_path, monkeypatch):
    """As docs/reference-data/ keeps a suite: its runs inside its directory, not beside it."""
    results, kept = tmp_path / "results", tmp_path / "kept"
    suite_dir = make_suite(results, ["ingest", "join"], 1, monkeypatch)
    beside = read_entry(suite_dir)
    kept.mkdir()
    moved = suite_dir.rename(kept / suite_dir.name)
    for run_dir in (d for d in results.iterdir() if d.is_dir()):
        run_dir.rename(moved / run_dir.name)
    inside = read_entry(moved)
    assert inside.pace_ms == beside.pace_ms and inside.commit == beside.commit
    assert inside.trusted is beside.trusted is not None
