import json

import pytest

from evaluator.compare import compare, format_cell, format_table, to_markdown
from ground.errors import EvaluationError


def _run(tmp_path, name, stage, impl, p50, p95, p99):
    run_dir = tmp_path / name
    run_dir.mkdir()
    summary = {
        "run": {"stage": stage, "impl": impl},
        "latency_ms": {"p50": p50, "p95": p95, "p99": p99},
    }
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir


def test_rows_follow_the_stage_ladder_with_increments(tmp_path):
    dirs = [
        _run(tmp_path, "c", "join", "builtin", 600.0, 900.0, 1400.0),
        _run(tmp_path, "a", "ingest", "builtin", 100.0, 150.0, 200.0),
        _run(tmp_path, "b", "parse", "builtin", 150.0, 210.0, 300.0),
    ]
    rows = compare(dirs)
    assert [r["stage"] for r in rows] == ["ingest", "parse", "join"]
    assert rows[0]["increment_p50"] is None
    assert (rows[1]["increment_p50"], rows[1]["increment_p95"], rows[1]["increment_p99"]) == (
        50.0,
        60.0,
        100.0,
    )
    assert rows[2]["increment_p99"] == 1100.0
    assert rows[2]["run_dir"] == str(dirs[0])


def test_repetitions_and_impls_are_grouped_with_increments_over_the_right_row(tmp_path):
    dirs = [
        _run(tmp_path, "i1", "ingest", "builtin", 10.0, 20.0, 30.0),
        _run(tmp_path, "i2", "ingest", "builtin", 14.0, 26.0, 90.0),
        _run(tmp_path, "i3", "ingest", "builtin", 12.0, 22.0, 40.0),
        _run(tmp_path, "j", "join", "builtin", 500.0, 800.0, 1000.0),
        _run(tmp_path, "tb", "tumbling", "builtin", 2500.0, 3000.0, 4000.0),
        _run(tmp_path, "tc", "tumbling", "custom", 1200.0, 1500.0, 2000.0),
        _run(tmp_path, "sb", "sliding", "builtin", 3500.0, 4500.0, 6000.0),
        _run(tmp_path, "sc", "sliding", "custom", 1700.0, 2000.0, 3000.0),
    ]
    rows = compare(dirs)
    by = {(r["stage"], r["impl"]): r for r in rows}
    assert [(r["stage"], r["impl"]) for r in rows] == [
        ("ingest", "builtin"), ("join", "builtin"), ("tumbling", "builtin"),
        ("tumbling", "custom"), ("sliding", "builtin"), ("sliding", "custom"),
    ]  # fmt: skip
    ingest = by[("ingest", "builtin")]
    assert (ingest["p50"], ingest["p95"], ingest["p99"]) == (12.0, 22.0, 40.0)
    assert ingest["p50_spread"] == [10.0, 14.0] and ingest["p99_spread"] == [30.0, 90.0]
    assert ingest["repetitions"] == 3 and len(ingest["run_dirs"]) == 3
    assert ingest["run_dir"] in ingest["run_dirs"]
    assert ingest["increment_p50"] is None and ingest["increment_over"] is None
    # join over the median ingest
    assert by[("join", "builtin")]["increment_p50"] == 488.0
    # custom tumbling has no custom join: over the built-in join
    assert by[("tumbling", "custom")]["increment_p50"] == 700.0
    assert by[("tumbling", "custom")]["increment_over"] == "join/builtin"
    assert by[("tumbling", "builtin")]["increment_p50"] == 2000.0
    # each sliding over the tumbling of its own implementation
    assert by[("sliding", "builtin")]["increment_p99"] == 2000.0
    assert by[("sliding", "custom")]["increment_p50"] == 500.0
    assert by[("sliding", "custom")]["increment_over"] == "tumbling/custom"
    text = format_table(rows)
    assert "tumbling/custom" in text and "runs" in text.splitlines()[0]


def test_foreign_summary_is_an_evaluation_error_naming_the_file(tmp_path):
    for name, doc in (
        ("old", {"run": {"stage": "ingest"}, "latency": {"p50": 1}}),
        ("stage", {"run": {"stage": "window"}, "latency_ms": {"p50": 1, "p95": 1, "p99": 1}}),
        ("text", {"run": {"stage": "ingest"}, "latency_ms": {"p50": "x", "p95": 1, "p99": 1}}),
        ("list", [1, 2]),
    ):
        run_dir = tmp_path / name
        run_dir.mkdir()
        (run_dir / "summary.json").write_text(json.dumps(doc))
        with pytest.raises(EvaluationError, match=str(run_dir / "summary.json")):
            compare([run_dir])


def test_format_cell():
    assert (format_cell(None), format_cell(1234.56), format_cell(3)) == ("-", "1,234.6", "3")


def test_tables_label_increments(tmp_path):
    rows = compare([_run(tmp_path, "a", "ingest", "builtin", 1.0, 2.0, 3.0)])
    text = format_table(rows)
    assert "difference of percentiles" in text
    assert text.splitlines()[0].split()[:3] == ["stage", "impl", "p50"]
    md = to_markdown(rows)
    assert md.splitlines()[2].startswith("| ingest | builtin | 1.0 |")


def test_unevaluated_run_is_an_error(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(EvaluationError, match="evaluate the run first"):
        compare([tmp_path / "x"])


def test_plots_increments_and_distributions(tmp_path):
    import pandas as pd

    from evaluator.compare import plot

    dirs = []
    for name, stage, base in (("a", "ingest", 10.0), ("b", "parse", 25.0)):
        run_dir = _run(tmp_path, name, stage, "builtin", base, base * 2, base * 3)
        pd.DataFrame(
            {"latency_ms": [base, base + 1, base * 3, -1], "in_range": [1, 1, 1, 0]}
        ).astype({"in_range": bool}).to_parquet(run_dir / "latencies.parquet")
        dirs.append(run_dir)
    paths = plot(compare(dirs), tmp_path / "plots", log_scale=True)
    assert [p.name for p in paths] == ["compare_increments.png", "compare_distributions.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
