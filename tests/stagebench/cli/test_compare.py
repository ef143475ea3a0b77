"""stagebench compare as an A/B comparison and as the regression check, through the CLI,
on made-up run and suite directories."""

import json

import pytest

from tests.evaluator.summaries import summary_doc
from tests.stagebench.cli.test_errors import stagebench
from tests.stagebench.results_dirs import make_suite


def make_runs(parent, name, p50s, trigger=0):
    """Evaluated ingest runs at 400 msg/s, one per p50, p99 twice the p50."""
    dirs = []
    for i, p50 in enumerate(p50s):
        run_dir = parent / f"20261126T15{i:02d}00Z-ingest-{name}{i}"
        run_dir.mkdir(parents=True)
        summary = summary_doc(
            run={"stage": "ingest", "impl": "builtin", "rate": 400.0, "workload": "latency"},
            config={"pipeline": {"trigger_interval_ms": trigger}},
            latency_ms={"p50": p50, "p95": 1.5 * p50, "p99": 2 * p50},
            confidence={"p50": [p50 - 1, p50 + 1], "p99": [2 * p50 - 4, 2 * p50 + 4]},
            machine={"pace": {"before_ms": 13.0, "after_ms": 13.2}},
            records={"missing": 0}, trusted=True,
        )  # fmt: skip
        (run_dir / "summary.json").write_text(json.dumps(summary))
        dirs.append(str(run_dir))
    return dirs


def test_three_slower_runs_against_three_are_reported_slower(tmp_path):
    base = make_runs(tmp_path, "a", [30, 31, 29])
    slow = make_runs(tmp_path, "b", [45, 46, 44], trigger=500)
    result = stagebench("compare", "--a", *base, "--b", *slow)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "[engine.spark] trigger_interval_ms: A 0, B 500" in out
    [p50] = [line for line in out.splitlines() if line.startswith("ingest  p50")]
    assert "+15 [+" in p50 and "+50.0 %" in p50 and "slower" in p50 and "3/3" in p50
    doc = json.loads(stagebench("compare", "--a", *base, "--b", *slow, "--json").stdout)
    assert [c["verdict"] for c in doc["changes"]] == ["slower", "slower"]
    assert all(c["ci95"][0] > 0 for c in doc["changes"])


def test_two_runs_of_one_stage_are_an_ab_comparison_without_a_verdict(tmp_path):
    [a], [b] = make_runs(tmp_path, "a", [30]), make_runs(tmp_path, "b", [45], trigger=500)
    result = stagebench("compare", a, b)
    assert result.returncode == 0, result.stderr
    assert "no verdict" in result.stdout and "1/1" in result.stdout
    assert "no verdict: fewer than 3 runs on a side" in result.stdout


def as_suite(suite_dir, run_dirs):
    """``suite_dir`` made a suite directory of ``run_dirs`` (its comparison.json)."""
    rounds = list(range(1, len(run_dirs) + 1))
    rows = [{"stage": "join", "impl": "builtin", "run_dirs": run_dirs, "run_rounds": rounds}]
    (suite_dir / "comparison.json").write_text(json.dumps({"stages": rows}))
    return suite_dir


def test_the_regression_check_exits_1_on_the_slower_side_and_0_on_the_same(tmp_path):
    base = as_suite(tmp_path / "base", make_runs(tmp_path / "base", "a", [30, 31, 29]))
    as_suite(tmp_path / "same", make_runs(tmp_path / "same", "s", [30, 31, 29]))
    as_suite(tmp_path / "slow", make_runs(tmp_path / "slow", "b", [45, 46, 44]))
    [slow] = make_runs(tmp_path / "one", "n", [45])

    def check(new, *extra):
        return stagebench("compare", "--baseline", str(base), str(new), *extra)

    failed = check(tmp_path / "slow", "--max-regression", "10%")
    assert failed.returncode == 1, failed.stderr
    assert failed.stdout.startswith("REGRESSION: NEW is significantly slower than BASE by more "
                                    "than 10 %: ingest p50 +50.0 % (+15 ms [+")  # fmt: skip
    assert len(failed.stdout.strip().splitlines()) == 1
    passed = check(tmp_path / "same", "--max-regression", "10%", "--json")
    assert passed.returncode == 0, passed.stderr
    doc = json.loads(passed.stdout)
    assert doc["verdict"] == "ok" and doc["exit_code"] == 0 and doc["max_regression"] == 0.1
    assert passed.stderr.startswith("OK: no significant regression beyond 10 %")
    # one run of NEW: no verdict, a code of its own (a gate never passes unjudged by
    # mistake), and the line says why; allowed, it passes
    unjudged = check(slow, "--max-regression", "10")
    assert unjudged.returncode == 4 and unjudged.stdout.startswith("NO VERDICT: "), unjudged
    assert "fewer than 3 runs" in unjudged.stdout
    allowed = check(slow, "--allow-no-verdict", "--json")
    assert allowed.returncode == 0 and json.loads(allowed.stdout)["exit_code"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-regression", "ten"], "ERROR: --max-regression: expected a percentage such as "
                                      "10%, got 'ten'"),
        (["--max-regression=-5%"], "ERROR: --max-regression: expected a percentage"),
    ],
)  # fmt: skip
def test_an_unparsable_limit_is_one_error_line(tmp_path, args, message):
    [a], [b] = make_runs(tmp_path, "a", [30]), make_runs(tmp_path, "b", [31])
    result = stagebench("compare", "--baseline", a, b, *args)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_directory_that_is_no_result_is_one_error_line(tmp_path):
    [a] = make_runs(tmp_path, "a", [30])
    (tmp_path / "empty").mkdir()
    result = stagebench("compare", "--baseline", a, str(tmp_path / "empty"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"ERROR: {tmp_path / 'empty'} is not a results directory: it holds neither "
        "summary.json (a run), comparison.json (a suite), capacity.json (a capacity search) "
        "nor capacities.json (a set of them)"
    ]
    no_side = stagebench("compare", "--a", a)
    assert no_side.returncode == 2 and no_side.stderr.startswith("ERROR: an A/B comparison")


def test_two_suites_compare_their_repeats_as_the_runs_of_each_side(tmp_path, monkeypatch):
    first = make_suite(tmp_path / "one", ["ingest"], 3, monkeypatch)
    second = make_suite(tmp_path / "two", ["ingest"], 3, monkeypatch)
    result = stagebench("compare", str(first), str(second), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["a"]) == len(doc["b"]) == 3 and doc["settings"] == []
    assert {(c["runs_a"], c["runs_b"]) for c in doc["changes"]} == {(3, 3)}
    assert {c["method"] for c in doc["changes"]} == {"welch"}
