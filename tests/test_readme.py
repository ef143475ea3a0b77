"""The README's Quick start is what users run first; CI runs its test command; its sample
table is rendered from stored reference data."""

import json
import re
import shutil
from pathlib import Path

import pytest

from evaluator.comparison.compare import compare
from evaluator.comparison.table import format_table
from ground import rundir
from ground.errors import ConfigError
from stagebench.reference import render as reference
from stagebench.reference.blocks import Block, blocks, body, comparison
from stagebench.reference.data import REFERENCE_DIR, stored
from tests.stagebench.results_dirs import make_suite

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_quick_start_has_exactly_two_one_line_commands():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)


def test_ci_runs_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci_lines[-1] == quick_start_commands()[1]


def test_every_doc_s_reference_blocks_are_rendered_from_the_stored_data():
    """The README's sample table and every block of docs/*.md are what ``python -m
    stagebench.reference render`` makes of docs/reference-data/: a hand edit of a number
    fails here."""
    if not stored(ROOT):
        pytest.skip(f"no reference suite stored yet in {REFERENCE_DIR}")
    assert blocks((ROOT / "README.md").read_text()), (
        "README.md has no <!-- reference-table: SUITE --> block for the stored suite"
    )
    assert unrendered(ROOT) == [], "run: python -m stagebench.reference render"


def unrendered(root: Path) -> list[str]:
    """Each block of ``root``'s docs that is not what render makes of it, as "doc: marker"."""
    return [
        f"{doc.as_posix()}: {block.label}"
        for doc in reference.documents(root)
        for block, shown in blocks((root / doc).read_text()).items()
        if shown != body(root, block, doc.parent)
    ]


def test_a_suite_stored_renders_its_own_table_into_the_readme(tmp_path, monkeypatch):
    results, root = tmp_path / "results", tmp_path / "clone"
    suite_dir = make_suite(results, ["floor", "ingest", "join"], 1, monkeypatch)
    run_dirs, rounds = rundir.ladder_runs([suite_dir])
    printed = format_table(compare(run_dirs, allow_mixed=True, rounds=rounds))
    root.mkdir()
    (root / "README.md").write_text(
        f"# x\n\n<!-- reference-table: {suite_dir.name} -->\nby hand\n<!-- /reference-table -->\n"
    )

    target = reference.store(suite_dir, root)

    assert target == root / "docs" / "reference-data" / suite_dir.name
    assert stored(root) == [suite_dir.name]
    # the small files only: no parquet, plots, pages or run files but the summary
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == sorted(["comparison.json", *(f"{d.name}/summary.json" for d in run_dirs)])
    with pytest.raises(ConfigError, match="never overwritten"):
        reference.store(suite_dir, root)
    shutil.rmtree(results)  # the stored copy stands alone
    assert reference.render(root) == {"README.md": [f"reference-table: {suite_dir.name}"]}
    readme = (root / "README.md").read_text()
    shown = blocks(readme)[Block("reference-table", suite_dir.name)]
    assert re.match(
        rf"```text\n{re.escape(printed)}\n```\n\nMeasured on \d{{4}}-\d\d-\d\d, ", shown
    )
    assert "2 cores, PySpark 4.3.0, Kafka 4.3.1 (embedded broker)" in shown
    assert readme.startswith("# x\n\n") and readme.endswith("<!-- /reference-table -->\n")
    assert unrendered(root) == []
    # a hand edit of a number: ingest's p50 one higher in its first digit
    bump = lambda m: m[1] + str((int(m[2]) + 1) % 10)  # noqa: E731
    (root / "README.md").write_text(re.sub(r"(?m)^(ingest\s+)(\d)", bump, readme))
    assert unrendered(root) == [f"README.md: reference-table: {suite_dir.name}"]


def test_a_suite_stored_reads_its_own_copies_where_the_originals_still_are(tmp_path, monkeypatch):
    suite_dir = make_suite(tmp_path / "results", ["floor", "ingest"], 1, monkeypatch)
    target = reference.store(suite_dir, tmp_path)
    run_dirs = [r.path for r in rundir.suite_runs(target)]
    assert [d.parent for d in run_dirs] == [target, target]
    # so a warning names the stored run as every clone has it, not the original
    summary = json.loads((run_dirs[0] / "summary.json").read_text())
    (run_dirs[0] / "summary.json").write_text(json.dumps(summary | {"warnings": ["slow"]}))
    where = f"docs/reference-data/{suite_dir.name}/{run_dirs[0].name}"
    wide = format_table(comparison(tmp_path, suite_dir.name), wide=True)
    assert wide.endswith(f"\n    {where}: slow")
    shown = body(tmp_path, Block("reference-table", suite_dir.name), Path("."))
    assert "\n!1 slow: floor\n" in shown


def test_render_without_a_marked_block_says_where_the_table_goes(tmp_path):
    (tmp_path / "README.md").write_text("# x\n")
    with pytest.raises(ConfigError, match="reference-table: SUITE"):
        reference.render(tmp_path)


def test_store_refuses_what_is_not_a_suite(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text("{}")
    with pytest.raises(ConfigError, match="neither a suite directory"):
        reference.store(run_dir, tmp_path)
