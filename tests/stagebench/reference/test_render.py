"""Reference data beyond the README's suite table: capacity searches stored and rendered as
``stagebench capacity`` prints them, the papers' figures beside a stored suite, blocks in
every doc, and the one-line errors of ``python -m stagebench.reference``."""

import json
import re
import shutil
from pathlib import Path

import pytest

from evaluator.text.number_format import format_estimate, format_ms
from ground import rundir
from ground.errors import ConfigError
from stagebench.capacity.table import format_table, headline
from stagebench.reference import render as reference
from stagebench.reference.blocks import Block, blocks, comparison
from stagebench.reference.data import PAPERS, stored
from stagebench.reference.measured import measured_line
from stagebench.results.documents import read_capacity
from tests.stagebench.results_dirs import make_suite

ROOT = Path(__file__).resolve().parents[3]
MACHINE = {"hostname": "vm", "processor": "x86_64", "cores": 2, "memory_gb": 7.8}
VERSIONS = {"pyspark": "4.3.0", "kafka_broker": "4.3.1", "stagebench_commit": "abc123def456"}


def search_dir(results: Path, stamp: str, capacity: float | None, sustainable: float) -> Path:
    """A capacity search's directory as the command leaves it: its capacity.json (written
    here by hand) beside a probe's run directory."""
    out = results / f"{stamp}-capacity-join-{int(sustainable):08x}"
    (out / f"{stamp}-join-000000a1").mkdir(parents=True)
    (out / f"{stamp}-join-000000a1" / rundir.SUMMARY).write_text("{}")
    fitted = capacity is not None
    doc = {
        "stage": "join", "impl": "builtin", "capacity_mps": capacity,
        "capacity_ci95_mps": [0.9 * capacity, 1.1 * capacity] if fitted else None,
        "pass90_mps": 0.8 * capacity if fitted else None,
        "pass90_ci95_mps": [0.7 * capacity, 0.85 * capacity] if fitted else None,
        "pass_curve": None, "sustainable_mps": sustainable,
        "first_unsustainable_mps": 1.2 * sustainable, "publisher_limit_mps": None,
        "precision": 0.1, "bracket_width": 0.2, "stopped": "converged" if fitted else "budget",
        "engine_cores_used": 1.5, "sustainable_mps_per_core": round(sustainable / 1.5, 1),
        "criteria": {"max_p50_ms": 10_000.0}, "seconds": 1500.0, "probes": [],
        "machine": MACHINE, "versions": VERSIONS, "dir": str(out), "growth": 2.0,
    }  # fmt: skip
    (out / rundir.CAPACITY).write_text(json.dumps(doc, indent=2))
    return out


def marked(kind: str, data: str) -> str:
    return f"<!-- {kind}: {data} -->\nby hand\n<!-- /{kind} -->\n"


def test_capacity_searches_stored_render_what_the_command_prints_in_every_doc(tmp_path):
    results, root = tmp_path / "results", tmp_path / "clone"
    first = search_dir(results, "20261125T090000Z", 5800.0, 5660.0)
    second = search_dir(results, "20261126T090000Z", None, 6000.0)
    (root / "docs").mkdir(parents=True)
    names = f"{first.name},{second.name}"
    (root / "README.md").write_text("# x\n\n" + marked("reference-capacity", names))
    (root / "docs" / "capacity.md").write_text(marked("reference-capacity", second.name))
    schema = "# generated\n\n" + marked("reference-capacity", "not-stored")
    (root / "docs" / "results-schema.md").write_text(schema)

    targets = [reference.store(d, root) for d in (first, second)]

    assert [sorted(p.name for p in t.iterdir()) for t in targets] == [["capacity.json"]] * 2
    assert stored(root) == stored(root, "capacity") == [first.name, second.name]
    assert stored(root, "suite") == []
    with pytest.raises(ConfigError, match="never overwritten"):
        reference.store(first, root)
    shutil.rmtree(results)  # the stored copies stand alone
    assert reference.render(root) == {
        "README.md": [f"reference-capacity: {names}"],
        "docs/capacity.md": [f"reference-capacity: {second.name}"],
    }
    docs = [read_capacity(d) for d in targets]
    printed = "\n".join([format_table(docs), *(f"search {i}: {headline(d)}" for i, d in
                                               enumerate(docs, 1))])  # fmt: skip
    shown = blocks((root / "README.md").read_text())[Block("reference-capacity", names)]
    data = ", ".join(f"[docs/reference-data/{n}](docs/reference-data/{n}/)"
                     for n in (first.name, second.name))  # fmt: skip
    assert shown == (
        f"```text\n{printed}\n```\n\nMeasured from 2026-11-25 to 2026-11-26, 2 cores "
        "(x86_64), PySpark 4.3.0, Kafka 4.3.1, stagebench commit `abc123def456`; "
        f"data: {data}.\n"
    )
    assert "search 1: 5,800 msg/s (95 % interval 5,220–6,380)" in shown
    # a doc in docs/ links to the data from where it is; the generated schema is left alone
    in_docs = (root / "docs" / "capacity.md").read_text()
    assert "Measured on 2026-11-26, " in in_docs
    assert f"[docs/reference-data/{second.name}](reference-data/{second.name}/)" in in_docs
    assert (root / "docs" / "results-schema.md").read_text() == schema


def test_the_papers_are_shown_beside_a_stored_suite(tmp_path, monkeypatch):
    suite_dir = make_suite(tmp_path / "results", ["floor", "ingest", "join"], 1, monkeypatch)
    root = tmp_path / "clone"
    (root / PAPERS).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / PAPERS, root / PAPERS)
    (root / "docs" / "reference.md").write_text(marked("reference-papers", suite_dir.name))
    reference.store(suite_dir, root)

    assert reference.render(root) == {"docs/reference.md": [f"reference-papers: {suite_dir.name}"]}

    text = (root / "docs" / "reference.md").read_text()
    rows = {(r.stage, r.impl): r for r in comparison(root, suite_dir.name).rows}
    table = {
        tuple(cells[:2]): cells[2:]
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| stage")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert list(table) == [("ingest", "builtin"), ("parse", "builtin"), ("join", "builtin"),
                           ("tumbling", "builtin"), ("tumbling", "custom"),
                           ("sliding", "builtin"), ("sliding", "custom")]  # fmt: skip
    for key in [("ingest", "builtin"), ("join", "builtin")]:
        row = rows[key]
        ours = f"{format_estimate(row.p50, row.p50_ci95)} ({format_ms(row.p99)})"
        assert table[key][-1] == ours and "[" in ours
    assert table[("ingest", "builtin")][:3] == ["292", "105", "0 (1–2)"]
    assert table[("join", "builtin")][:3] == ["1,298", "582 (> 1,400)", "1 (3)"]
    assert table[("tumbling", "builtin")] == ["≈1,856", "2,807 (4,649)", "–", "–"]
    assert table[("sliding", "custom")][1] == "1,704 (tail to 3,700)"
    assert "| stage | impl | Flink 1.3, 001 (cumulative) | Structured Streaming 2.4, 004 |" in text
    assert "Papers ([sources](method.md#sources)): Flink 1.3, 001 (cumulative): van Dongen" in text
    assert re.search(r"\nMeasured on \d{4}-\d\d-\d\d, 2 cores, PySpark 4.3.0, ", text)
    assert f"(reference-data/{suite_dir.name}/).\n<!-- /reference-papers -->" in text


def test_a_block_naming_data_not_stored_renders_nothing_and_says_what_is(tmp_path):
    search = search_dir(tmp_path / "results", "20261126T090000Z", 5800.0, 5660.0)
    root = tmp_path / "clone"
    (root / "docs").mkdir(parents=True)
    readme = "# x\n\n" + marked("reference-capacity", search.name)
    (root / "README.md").write_text(readme)
    (root / "docs" / "a.md").write_text(marked("reference-table", "20261126T000000Z-suite-x"))
    reference.store(search, root)

    with pytest.raises(ConfigError) as err:
        reference.render(root)
    assert str(err.value) == (
        "docs/a.md: reference suite 20261126T000000Z-suite-x is not stored in "
        "docs/reference-data (stored suites: none)"
    )
    assert (root / "README.md").read_text() == readme  # nothing written
    (root / "docs" / "a.md").write_text(marked("reference-capacity", f"{search.name},other"))
    with pytest.raises(ConfigError, match=rf"capacity search other .*searches: {search.name}\)"):
        reference.render(root)
    (root / "docs" / "a.md").write_text(marked("reference-papers", "some-suite"))
    with pytest.raises(ConfigError, match="reference suite some-suite is not stored"):
        reference.render(root)


def test_papers_without_their_data_file_are_refused(tmp_path, monkeypatch):
    suite_dir = make_suite(tmp_path / "results", ["ingest"], 1, monkeypatch)
    reference.store(suite_dir, tmp_path)
    (tmp_path / "README.md").write_text(marked("reference-papers", suite_dir.name))
    with pytest.raises(ConfigError, match=r"README\.md: docs/reference-data/papers\.json cannot"):
        reference.render(tmp_path)


def test_store_refuses_what_is_neither_a_suite_nor_a_capacity_search(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / rundir.SUMMARY).write_text("{}")
    for path in (run_dir, tmp_path / "missing"):
        with pytest.raises(ConfigError, match=r"neither a suite directory .* nor a capacity"):
            reference.store(path, tmp_path)
    broken = tmp_path / "20261126T090000Z-capacity-join-1"
    broken.mkdir()
    (broken / rundir.CAPACITY).write_text("{")
    with pytest.raises(ConfigError, match=r"capacity\.json cannot be read"):
        reference.store(broken, tmp_path)
    assert not (tmp_path / "docs").exists()


def test_the_command_explains_the_three_blocks_and_errors_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        reference.main(["--help"])
    assert done.value.code == 0
    helped = capsys.readouterr().out
    for kind in ("reference-table", "reference-capacity", "reference-papers"):
        assert f"<!-- {kind}: " in helped and f"<!-- /{kind} -->" in helped
    assert reference.main(["store", str(tmp_path / "missing")]) == ConfigError.exit_code
    error = capsys.readouterr().err
    assert error.startswith("ERROR: ") and error.count("\n") == 1


def test_the_measured_line_names_the_java_where_it_was_recorded():
    def line(versions):
        return measured_line(["2026-11-28"], [{"cores": 2}], [versions], None, "d")

    assert "2 cores, PySpark 4.3.0 (Java 25), Kafka 4.3.1, " in line({**VERSIONS, "java": "25"})
    assert "2 cores, PySpark 4.3.0, Kafka 4.3.1, " in line(VERSIONS)  # older results


VERDICT = re.compile(
    r"\[(?P<lo>[−+]?[\d,.]+)–(?P<hi>[−+]?[\d,.]+)\]\s+(?:\S+\s+)?"
    r"(?P<word>significant|within noise)"
)
"""An interval and the verdict printed beside it: in a line between engines, or in the
stage table with the 'over' column between them."""


def _number(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


@pytest.mark.parametrize("name", stored(ROOT, "suite"))
def test_no_stored_suite_prints_an_interval_that_disagrees_with_its_verdict(name):
    """What `stagebench compare` prints of every stored suite, wide and compact: each
    interval excludes 0 exactly where its verdict beside it says significant."""
    from evaluator.comparison.table import format_table as stage_table

    found = comparison(ROOT, name)
    judged = 0
    for text in (stage_table(found), stage_table(found, wide=True)):
        for line in text.splitlines():
            for match in VERDICT.finditer(line):
                lo, hi = _number(match["lo"]), _number(match["hi"])
                judged += 1
                assert (lo > 0 or hi < 0) == (match["word"] == "significant"), line
    for item, key in [(r, f"increment_{q}") for r in found.rows for q in ("p50", "p99")] + [
        (d, q) for d in found.engines for q in ("p50", "p99")
    ]:
        joint = getattr(item, f"{key}_ci95_joint")
        if joint is not None:
            assert getattr(item, f"{key}_significant") == (joint[0] > 0 or joint[1] < 0)
    if found.tests:  # a suite of three rounds prints its verdicts beside their intervals
        assert judged > 0
