"""The first table a user reads: within 100 characters, one row per engine and stage,
increments over the same engine's stage below, verdicts in a word, warnings by cause."""

import contextlib
from pathlib import Path

import pytest

from evaluator.comparison.compare import compare
from evaluator.comparison.table import format_table
from ground import rundir
from tests.evaluator.comparison.test_compare import _run

QUICK_START = "docs/reference-data/20261128T112229Z-suite-58b45c81"
"""The Quick start suite the README shows."""
ROOT = Path(__file__).parents[3]


def test_the_quick_start_table_fits_100_columns_and_says_what_one_round_cannot_tell():
    with contextlib.chdir(ROOT):
        run_dirs, rounds = rundir.ladder_runs([Path(QUICK_START)])
        lines = format_table(compare(run_dirs, rounds=rounds)).splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    assert lines[0].split() == ["stage", "p50", "ms", "[95", "%]", "p99", "ms", "+p50", "ms",
                                "[95", "%]", "over", "verdict", "!"]  # fmt: skip
    assert [line.split()[0] for line in lines[2:6]] == ["floor", "ingest", "join", "tumbling"]
    assert lines[4].split()[-3:] == ["ingest", "unjudged", "!1"]
    one_round = [line for line in lines if line.startswith("unjudged: ")]
    assert len(one_round) == 1 and "suite" in one_round[0]
    assert lines[-1] == "!1 steadiness not shown: ingest, join"


def test_each_engine_has_its_ladder_over_the_one_floor(tmp_path):
    runs = [
        ("f", "floor", "floor", 1.0),
        ("si", "ingest", "spark", 24.0),
        ("sj", "join", "spark", 250.0),
        ("fi", "ingest", "flink", 3.0),
        ("fj", "join", "flink", 5.0),
    ]
    dirs = [
        _run(tmp_path, name, stage, "builtin", p50, p50, p50, run={"engine": engine})
        for name, stage, engine, p50 in runs
    ]
    rows = compare(dirs).rows
    got = [(r.engine, r.stage, r.increment_p50, r.increment_over) for r in rows]
    assert got == [
        ("floor", "floor", None, None),
        ("flink", "ingest", 2.0, "floor/builtin"),
        ("spark", "ingest", 23.0, "floor/builtin"),
        ("flink", "join", 2.0, "flink:ingest/builtin"),
        ("spark", "join", 226.0, "spark:ingest/builtin"),
    ]
    lines = format_table(compare(dirs)).splitlines()
    assert [line.split()[0] for line in lines[2:7]] == [
        "floor", "flink:ingest", "spark:ingest", "flink:join", "spark:join"
    ]  # fmt: skip
    assert lines[5].split()[-2:] == ["ingest", "-"]  # over its own engine's ingest


def test_one_engine_keeps_bare_stage_names(tmp_path):
    dirs = [
        _run(tmp_path, "f", "floor", "builtin", 1.0, 1.0, 1.0, run={"engine": "floor"}),
        _run(tmp_path, "i", "ingest", "builtin", 9.0, 9.0, 9.0, run={"engine": "spark"}),
        _run(tmp_path, "t", "tumbling", "custom", 90.0, 90.0, 90.0, run={"engine": "spark"}),
    ]
    lines = format_table(compare(dirs)).splitlines()
    assert [line.split()[0] for line in lines[2:5]] == ["floor", "ingest", "tumbling/custom"]
    assert compare(dirs).rows[2].increment_over == "ingest/builtin"


def test_verdicts_are_words(tmp_path):
    dirs = [
        _run(tmp_path, f"i{k}", "ingest", "builtin", p, p, p, run={"round": k})
        for k, p in enumerate([10.0, 11.0, 10.5], 1)
    ]
    dirs += [
        _run(tmp_path, f"p{k}", "parse", "builtin", p, p, p)
        for k, p in enumerate([30.0, 31.0, 30.5], 1)
    ]
    dirs += [
        _run(tmp_path, f"j{k}", "join", "builtin", p, p, p)
        for k, p in enumerate([29.0, 33.0, 31.0], 1)
    ]
    lines = format_table(compare(dirs)).splitlines()
    verdicts = {line.split()[0]: line for line in lines[2:5]}
    assert verdicts["ingest"].rstrip().endswith("-")
    assert "significant" in verdicts["parse"] and "within noise" in verdicts["join"]
    assert not any(line.startswith("unjudged: ") for line in lines)


def test_warnings_are_one_line_per_cause_naming_the_rows(tmp_path):
    long = "x" * 80
    dirs = [
        _run(tmp_path, "i", "ingest", "builtin", 9.0, 9.0, 9.0,
             warnings=["slow start: 30 s to the first output", f"{long}: detail"]),
        _run(tmp_path, "p", "parse", "builtin", 19.0, 19.0, 19.0,
             warnings=["slow start: 41 s to the first output"]),
    ]  # fmt: skip
    lines = format_table(compare(dirs)).splitlines()
    assert lines[2].endswith("!1,2") and lines[3].endswith("!1")
    assert "!1 slow start: ingest, parse" in lines
    assert f"!2 {'x' * 59}…: ingest" in lines
    assert max(map(len, lines)) <= 100


def test_a_stage_written_at_every_update_names_its_first_update(tmp_path):
    updates = {"first_update_ms": {"p50": 40.0, "p99": 90.0}, "per_window": {"mean": 3.0}}
    dirs = [_run(tmp_path, "u", "tumbling-union", "builtin", 900.0, 950.0, 990.0, updates=updates)]
    lines = format_table(compare(dirs)).splitlines()
    assert lines[-1] == (
        "tumbling-union: written at every update (p50, p99: complete ones); first update "
        "p50 40, p99 90 ms"
    )


def _engines_in_rounds(tmp_path, rounds):
    dirs, numbers = [], []
    for k in range(1, rounds + 1):
        for engine, stage, p50 in (
            ("floor", "floor", 1.0),
            ("spark", "ingest", 24.0 + k),
            ("flink", "ingest", 3.0 + k / 10),
            ("spark", "join", 250.0 + k),
            ("flink", "join", 5.0),
            ("flink", "tumbling", 900.0 + k),
        ):
            name = f"{engine}-{stage}-{k}"
            dirs.append(
                _run(tmp_path, name, stage, "builtin", p50, p50, 2 * p50, run={"engine": engine})
            )
            numbers.append(k)
    return dirs, numbers  # fmt: skip


def test_engines_on_one_stage_are_compared_pair_by_pair_with_a_verdict(tmp_path):
    dirs, rounds = _engines_in_rounds(tmp_path, 3)
    comparison = compare(dirs, rounds=rounds)
    pairs = [(d.stage, d.engine, d.over, d.kind) for d in comparison.engines]
    # tumbling: flink's alone, nothing to compare it with; the floor is no engine's stage
    assert pairs == [("ingest", "spark", "flink", "stateless"), ("join", "spark", "flink", "join")]
    ingest, join = comparison.engines
    assert join.p50 == pytest.approx(247.0) and join.p50_method == "rounds"
    assert join.p50_significant is True and ingest.p50_significant is True
    # one family: the engines' tests count with the increments'
    increments = sum(getattr(r, f"increment_{q}_p") is not None
                     for r in comparison.rows for q in ("p50", "p99"))  # fmt: skip
    assert comparison.tests == increments + 4
    lines = format_table(comparison).splitlines()
    assert "between engines, on the same stage and kind of operator (ms):" in lines
    assert any(line.startswith("  join: spark − flink p50 +247 [") and
               line.endswith("significant") for line in lines)  # fmt: skip
    assert max(map(len, lines)) <= 100


def test_one_round_of_engines_compares_them_without_a_verdict(tmp_path):
    dirs, rounds = _engines_in_rounds(tmp_path, 1)
    comparison = compare(dirs, rounds=rounds)
    assert [d.p50_significant for d in comparison.engines] == [None, None]
    assert all(d.p50_p is None for d in comparison.engines)
    wide = format_table(comparison, wide=True).splitlines()
    [ingest] = [line for line in wide if line.startswith("  ingest: spark − flink p50 +")]
    assert "; p99 +" in ingest and "significant" not in ingest


def test_spark_s_real_time_mode_is_an_engine_column_of_its_own(tmp_path):
    dirs, numbers = [], []
    for k in (1, 2, 3):
        for engine, trigger, p50 in (("spark", "processing-time", 24.0 + k),
                                     ("spark", "real-time", 1.0 + k / 10),
                                     ("flink", None, 1.2 + k / 10)):  # fmt: skip
            config = {"pipeline": {"trigger": trigger}} if trigger else {}
            name = f"{engine}-{trigger}-{k}"
            dirs.append(_run(tmp_path, name, "ingest", "builtin", p50, p50, 2 * p50,
                             run={"engine": engine}, config=config))  # fmt: skip
            numbers.append(k)
    comparison = compare(dirs, rounds=numbers, allow_mixed=True)
    pairs = {(d.engine, d.over): d for d in comparison.engines}
    assert set(pairs) == {("spark", "flink"), ("spark@real-time", "flink"),
                          ("spark@real-time", "spark")}  # fmt: skip
    assert all(d.impl == "builtin" and d.kind == "stateless" for d in pairs.values())
    assert pairs["spark@real-time", "flink"].p50 == pytest.approx(-0.2)
    assert pairs["spark@real-time", "spark"].p50 == pytest.approx(1.0 + 0.2 - 26.0)
    assert "ingest: spark@real-time − spark p50 −25 [" in format_table(comparison)
