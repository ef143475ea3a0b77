"""Steps in a series: found where the level changes, not where one run strays; the gate
of ``history --steps`` on the newest level; its exit codes."""

import numpy as np
import pytest

from stagebench.cli import build_parser
from stagebench.history.steps import find_steps, worse_level
from tests.stagebench.cli.test_errors import stagebench
from tests.stagebench.site.histories import STEP_AT, flat, make_history, stepped


def _series(levels: list[float], seed: int = 0) -> list[float]:
    """The levels with an AR(1) host drift and a run's own spread, 5 % each."""
    rng = np.random.default_rng(seed)
    host, out = 0.0, []
    for level in levels:
        host = 0.5 * host + rng.normal(0, 0.043)
        out.append(level * float(np.exp(host + rng.normal(0, 0.05))))
    return out


def test_a_step_is_found_at_its_first_point_and_a_flat_series_has_none():
    for seed in range(5):
        assert find_steps(_series([100.0] * 30, seed)) == [], seed
        [step] = find_steps(_series([100.0] * 15 + [160.0] * 15, seed))
        assert step.index == 15 and 0.45 < step.change < 0.75 and not step.provisional


def test_one_stray_run_is_no_step_but_the_newest_alone_is_a_provisional_one():
    values = _series([100.0] * 20, 1)
    values[10] *= 3
    assert find_steps(values) == []
    [step] = find_steps([*values[:19], 300.0])
    assert step.provisional and step.index == 19
    assert worse_level([step], 20, 0.1) == step and worse_level([step], 20, 3.0) is None


def _steps(results, *more: str) -> int:
    """``stagebench history --steps`` in this process: its handler's exit code."""
    args = build_parser().parse_args(["history", "--results", str(results), "--steps", *more])
    return int(args.handler(args))


def test_history_steps_exits_1_on_a_worse_newest_level(tmp_path):
    stepped(tmp_path, STEP_AT + 3)
    result = stagebench("history", "--results", str(tmp_path), "--steps")
    assert result.returncode == 1, result.stderr
    assert "commit: c011 → c012" in result.stdout
    assert "version pyspark: 4.3.0 → 4.4.0" in result.stdout
    assert "WORSE: spark join builtin p50 is +" in result.stdout


def test_history_steps_exits_0_within_the_tolerance_4_when_too_short_2_on_bad_input(
    tmp_path, capsys
):
    stepped(tmp_path / "worse", STEP_AT + 3)
    assert _steps(tmp_path / "worse", "--tolerance", "60%") == 0
    assert "no level worse by more than 60 %" in capsys.readouterr().out
    flat(tmp_path / "flat")
    assert _steps(tmp_path / "flat") == 0
    assert "0 steps in 1 series" in capsys.readouterr().out
    make_history(tmp_path / "short", [200.0, 400.0], ["c0", "c1"])
    assert _steps(tmp_path / "short") == 4
    assert "no verdict" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        _steps(tmp_path / "flat", "--tolerance", "x")
    assert exited.value.code == 2 and "expected a percentage" in capsys.readouterr().err
