"""No text stagebench prints repeats a word ("36006 malformed outputs outputs"): every
string and f-string of the five packages, and every warning the evaluator and the run
compose from keys and figures, rendered with each of its branches taken."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from evaluator.config import EvaluatorConfig
from evaluator.latencies.latency import Period
from evaluator.model.result import Records
from evaluator.recovery import section as recovery
from evaluator.text import caveats
from stagebench.resources import pace
from stagebench.resources.summary import MACHINE, machine_warnings

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ground", "publisher", "engines", "evaluator", "stagebench")
DOUBLED = re.compile(r"\b([A-Za-z]{2,})\s+\1\b")
"""A word twice in a row, in the same case (``--app-dir DIR`` is no repeat)."""


def doubled(text: str) -> list[str]:
    return [m[0] for m in DOUBLED.finditer(text)]


def templates() -> list[tuple[str, str]]:
    """(where, text) of every string literal and f-string of the packages, an f-string's
    fields shown as ``{}``."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.JoinedStr):
                    parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
                    text = "".join(str(p) for p in parts)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                else:
                    continue
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", text))
    return found


def test_no_string_of_the_code_repeats_a_word():
    repeats = [f"{where}: {doubled(text)}" for where, text in templates() if doubled(text)]
    assert repeats == []


def test_the_scan_finds_a_repeat():
    assert doubled("36006 malformed outputs outputs") == ["outputs outputs"]
    assert doubled("python -m x --app-dir DIR") == []


STEADY = {"slope_ms_per_min": 12.0, "ci95": [3.0, 20.0], "allowed_ms": 25.0,
          "tolerance": 0.1, "seconds": 48, "effective_seconds": 5.2}  # fmt: skip
WINDOW = {"kind": "broker-restart", "recovered": False, "level": "new", "settled_s": 2.0,
          "settled_p50_ms": 287.0, "offset": 0.31, "offset_ci95": [0.24, 0.38]}  # fmt: skip


def evaluator_warnings() -> list[str]:
    """Every warning of :mod:`evaluator.text.caveats` and of the recovery, each branch taken:
    every count of ``records`` non-zero, every verdict of the steadiness."""
    records = {f.name: 5 for f in dataclasses.fields(Records)}
    config = EvaluatorConfig(warmup_s=0)
    out = caveats.distrust(records)
    out += caveats.run_warnings({**records, "outputs": 0}, config, Period(0, 1, 2, 1), False)
    changes = ([-50.0, 40.0], [-50.0, -10.0], [10.0, 40.0])  # either way, down, up
    for verdict, change in [("rising", None), ("falling", None)] + [
        ("undetermined", c) for c in changes
    ]:
        out += caveats.steady_warnings({**STEADY, "verdict": verdict, "change_ms": change})
    out += caveats.steady_warnings(None)
    out += caveats.missing_warning(
        {"count": 5, "spans": [[1, 2], [3, 4]], "spans_total": 2, "examples": [{"lane": 1}]}
    )
    out += caveats.send_delay_warning(
        {"send_delay_ms": {"count": 9, "max": 900.0, "p99": 800.0}, "same_clock": False,
         "latency_ms": {"p50": 10.0, "p99": 20.0}},
        {"p50": 5.0, "p99": 9.0},
    )  # fmt: skip
    out += recovery.warnings(
        {"windows": [WINDOW, {**WINDOW, "level": "before", "settled_s": None}],
         "summary": {"windows": 2}, "threshold": 0.2}
    )  # fmt: skip
    return out


def run_warnings() -> list[str]:
    """The run's own warnings on the machine and the host's pace."""
    machine = {"saturated_share": 0.5, "cores": 2, "cpu_outside_run_pct_mean": 90.0,
               "steal_pct_mean": 9.0}  # fmt: skip
    moved = {"before_ms": 10.0, "after_ms": 14.0, "change": 0.4}
    return machine_warnings({MACHINE: machine}) + pace.run_warnings(moved)  # type: ignore[arg-type]


@pytest.mark.parametrize("produce", [evaluator_warnings, run_warnings])
def test_no_warning_repeats_a_word(produce):
    warnings = produce()
    assert len(warnings) >= 3
    assert [w for w in warnings if doubled(w)] == []
