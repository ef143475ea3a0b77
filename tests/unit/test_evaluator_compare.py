import json

import pytest

from evaluator.compare import compare, format_table, to_markdown
from stagebench.errors import EvaluationError


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
