"""Where the runs a suite's comparison.json lists are found."""

import json

import pytest

from ground import rundir
from ground.errors import EvaluationError


def _suite(tmp_path, rows):
    suite_dir = tmp_path / "results" / "20261126T171156Z-suite-1"
    suite_dir.mkdir(parents=True)
    (suite_dir / rundir.COMPARISON).write_text(json.dumps({"stages": rows}))
    return suite_dir


def test_a_suites_runs_are_found_inside_it_first_then_beside_it(tmp_path):
    rows = [
        {"stage": "floor", "impl": "builtin", "run_dirs": ["results/a", "results/b"],
         "run_rounds": [1, 2]},
        {"stage": "join", "impl": "custom", "run_dirs": ["elsewhere/c"], "run_rounds": [None]},
    ]  # fmt: skip
    suite_dir = _suite(tmp_path, rows)
    (suite_dir / "a").mkdir()  # kept with the suite, as docs/reference-data/ keeps them
    runs = rundir.suite_runs(suite_dir)
    assert runs == [
        rundir.SuiteRun("floor", "builtin", 1, suite_dir / "a"),
        rundir.SuiteRun("floor", "builtin", 2, suite_dir.parent / "b"),
        rundir.SuiteRun("join", "custom", None, suite_dir.parent / "c"),
    ]


@pytest.mark.parametrize("text", ["not json", '{"stages": [{"run_dirs": ["a"]}]}', "{}"])
def test_a_comparison_this_version_cannot_read_names_its_file(tmp_path, text):
    suite_dir = _suite(tmp_path, [])
    (suite_dir / rundir.COMPARISON).write_text(text)
    with pytest.raises(EvaluationError, match=r"suite-1/comparison\.json is not a suite's"):
        rundir.suite_runs(suite_dir)


def test_a_missing_comparison_is_an_evaluation_error(tmp_path):
    with pytest.raises(EvaluationError, match=r"comparison\.json"):
        rundir.suite_runs(tmp_path)


def test_a_results_directory_name_starts_with_its_utc_time():
    from datetime import UTC, datetime

    when = datetime(2026, 11, 26, 18, 46, 41, tzinfo=UTC)
    name = rundir.dir_name("suite", "b6ab1388", when)
    assert name == "20261126T184641Z-suite-b6ab1388"
    assert rundir.started_at(name) == when
    assert rundir.started_at("my-results") is None
