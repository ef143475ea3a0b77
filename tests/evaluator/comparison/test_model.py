"""The typed comparison rows write comparison.json and ``compare --json`` exactly as the
dict-built ones did.

comparison_golden.json holds, for a few hand-made suites and comparisons, the documents
written before :class:`~evaluator.comparison.result.ComparisonRow` existed: a suite's
comparison.json of one round and of three (its id and time left out, the results
directory named ``<results>``), ``compare --json`` of runs of two implementations made
apart with their own intervals, warnings and paces, of runs that differ in more than
stage (NOT COMPARABLE), and of an A/B pair. The model must give the same keys, in the same
order, with the same values, besides the row keys added since (:data:`ADDED`). The
verdicts' keys were written again when a table's tests came to be judged with joint
intervals instead of Holm's correction (``p_adjusted``, ``ci95_joint``, ``within_noise``);
every other value stayed as it was.
"""

import argparse
import json
from pathlib import Path

from stagebench.cli import compare as command
from tests.evaluator.comparison.test_compare import _ci, _config, _paced, _run, _steady
from tests.stagebench.results_dirs import make_suite

GOLDEN = Path(__file__).with_name("comparison_golden.json")
ADDED = (
    "first_update_p50",
    "first_update_p99",
    "updates_per_window",
    "recovery_s",
    "settled_s",
    "settled_offset",
)
"""Row keys added after the golden documents: a stage written at every update, the
recovery of runs with disturbances. The runs' stream engine (``engine``) came later
too: null for runs that do not name it, else the one that ran each stage; and a
document's ``engines``, the differences between engines: none for one engine's runs."""
SUITE_ADDED = ("application", "app_warmup_s", "app_warmup_rate", "warm_settle_window_s")
"""A suite's ``[run]`` settings added after the golden documents (its shared Spark
application), and comparison.json's ``application``: null for these suites, whose runs
each had a job of their own, as is their order's ``fixed_first`` false. The engine's
``profile`` came later too (latency for these suites), and ``warmup_min_s`` null for the
engine's own."""
ROOT = "<results>"


def _suite(tmp_path: Path, monkeypatch, stages: list[str], repeat: int) -> dict:
    suite_dir = make_suite(tmp_path, stages, repeat, monkeypatch)
    doc = json.loads((suite_dir / "comparison.json").read_text())
    assert doc.pop("application") is None
    assert doc.pop("auto") is None  # --repeat auto's plan, added since
    assert doc["order"].pop("fixed_first") is False
    run = doc["settings"]["run"]
    assert run.pop("application") == "per-run" and all(run.pop(k) for k in SUITE_ADDED[1:])
    assert run.pop("profile") == "latency"
    # [run] warmup_min_s is since each engine's own unless set (Spark's: 240 s)
    assert run["warmup_min_s"] is None
    run["warmup_min_s"] = 240.0
    assert run.pop("engine") == ""  # [run] engine, added since: each stage's default
    # Spark's table, added since: [run] master went there
    assert doc["settings"].pop("engine.spark")["master"] == "local[2]"
    return {k: v for k, v in doc.items() if k not in ("suite", "created_at")}


def _printed(capsys, run_dirs=(), a_dirs=(), b_dirs=()) -> dict:
    """What ``stagebench compare --json --allow-mixed`` prints for these directories."""
    args = argparse.Namespace(
        baseline=None, max_regression=None, a_dirs=list(a_dirs), b_dirs=list(b_dirs),
        run_dirs=list(run_dirs), allow_mixed=True, json=True, markdown=False,
        allow_no_verdict=False, wide=False,
    )  # fmt: skip
    capsys.readouterr()
    assert command.run(args) == 0
    return json.loads(capsys.readouterr().out)


def _made_apart(tmp_path: Path) -> list[Path]:
    """Three runs of ingest, three of tumbling builtin, one of tumbling custom: Welch's
    test, a within-run one and a row with no increment test."""
    dirs = []
    for i, (p50, pace) in enumerate(((10.0, 40.0), (12.0, 44.0), (14.0, 41.0))):
        dirs.append(_run(tmp_path, f"i{i}", "ingest", "builtin", p50, 20.0, 3 * p50,
                         confidence=_ci((p50 - 1, p50 + 1), (3 * p50 - 2, 3 * p50 + 2)),
                         steady_state=_steady("steady"), **_paced(pace, pace + 1)))  # fmt: skip
    for i, p50 in enumerate((2500.0, 2600.0, 2450.0)):
        dirs.append(_run(tmp_path, f"t{i}", "tumbling", "builtin", p50, 3000.0, 2 * p50,
                         warnings=["publisher behind schedule"] if i else [],
                         confidence=_ci((p50 - 50, p50 + 50), (2 * p50 - 90, 2 * p50 + 90)),
                         steady_state=_steady("rising" if i == 2 else "steady"),
                         **_paced(42.0, None)))  # fmt: skip
    dirs.append(_run(tmp_path, "c", "tumbling", "custom", 1200.0, 1500.0, 2000.0,
                     confidence=_ci((1100.0, 1300.0), (1900.0, 2100.0))))  # fmt: skip
    return dirs


def _mixed(tmp_path: Path) -> list[Path]:
    common = {"workload": "latency", "duration_s": 60, "bootstrap": "127.0.0.1:9092"}
    return [
        _run(tmp_path, "a", "ingest", "builtin", 10.0, 20.0, 30.0, config=_config("a"),
             run={"rate": 400, **common}),
        _run(tmp_path, "b", "parse", "builtin", 11.0, 21.0, 31.0, config=_config("b"),
             run={"rate": 400.0, **common}),
        _run(tmp_path, "d", "join", "builtin", 300.0, 350.0, 400.0,
             config=_config("d", watermark_delay_ms=500), run={"rate": 800, **common}),
    ]  # fmt: skip


def _ab(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    sides = []
    for side, shift in (("a", 0.0), ("b", 30.0)):
        sides.append([
            _run(tmp_path, f"{side}{i}", "join", "builtin", p50 + shift, 500.0, 2 * p50 + shift,
                 confidence=_ci((p50 - 5, p50 + 5), (2 * p50 - 9, 2 * p50 + 9)))
            for i, p50 in enumerate((400.0, 410.0, 395.0))
        ])  # fmt: skip
    return sides[0], sides[1]


def documents(tmp_path: Path, monkeypatch, capsys) -> dict[str, dict]:
    """Every case's document, the results directory's path replaced by ``<results>``."""
    for name in ("apart", "mixed", "ab"):
        (tmp_path / name).mkdir()
    docs = {
        "one_round": _suite(tmp_path / "one", monkeypatch, ["ingest", "parse", "join"], 1),
        "three_rounds": _suite(tmp_path / "three", monkeypatch, ["floor", "ingest", "join"], 3),
        "made_apart": _printed(capsys, _made_apart(tmp_path / "apart")),
        "not_comparable": _printed(capsys, _mixed(tmp_path / "mixed")),
    }
    a_dirs, b_dirs = _ab(tmp_path / "ab")
    docs["ab_pair"] = _printed(capsys, a_dirs=a_dirs, b_dirs=b_dirs)
    return json.loads(json.dumps(docs).replace(str(tmp_path), ROOT))


def _text(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=False)


def test_comparison_json_is_what_it_held_before_the_model(tmp_path, monkeypatch, capsys):
    golden = json.loads(GOLDEN.read_text())
    for name in ("one_round", "three_rounds"):
        # [run] master is [engine.spark] master since engines have tables: each run's
        # config.json holds it
        assert golden[name]["settings"]["run"].pop("master") == "local[2]"
    docs = documents(tmp_path, monkeypatch, capsys)
    for name in ("one_round", "three_rounds"):
        # every engine's table is a suite's setting: Kafka Streams' came after the golden
        assert "producer_linger_ms" in docs[name]["settings"].pop("engine.kafka-streams")
    assert list(golden) == list(docs)
    for name in ("one_round", "three_rounds"):
        # engines added since: their tables are among the settings
        assert docs[name]["settings"].pop("engine.flink")["linger_ms"] == 0
        assert docs[name]["settings"].pop("engine.command")["ready"] == "first-output"
    for name, doc in docs.items():
        assert _text(_without_added(doc)) == _text(golden[name]), name


def _without_added(node):
    """``node`` with the :data:`ADDED` keys of every row left out; each must be there,
    null for these runs (none is written at every update)."""
    if isinstance(node, list):
        return [_without_added(item) for item in node]
    if not isinstance(node, dict):
        return node
    if "stages" in node and "engines" in node:  # a document: one engine's, no pairs
        assert node.pop("engines") == [], node
    if "increment_over" in node:  # a row
        assert all(node.pop(key) is None for key in ADDED), node
        ran = node.pop("engine")
        assert ran in (None, "floor" if node["stage"] == "floor" else "spark"), node
    return {key: _without_added(value) for key, value in node.items()}
