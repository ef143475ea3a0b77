"""``stagebench compare``: the stage table of evaluated runs, an A/B comparison of two
runs or groups of runs, or the regression check of NEW against a baseline.

Which of them follows from the arguments: ``--baseline BASE NEW`` is the check;
``--a DIR... --b DIR...``, two suite directories, or two runs of one stage are an A/B
comparison; anything else is the stage table (a ladder: runs that differ only in stage
and implementation). A suite directory stands for its runs, its repeats the runs of
its side.
"""

import argparse
import json
import re
import sys
from pathlib import Path

from evaluator import ab
from evaluator.compare import compare
from evaluator.comparison_table import format_table, to_markdown
from evaluator.summary_file import read_summary
from ground import rundir
from ground.errors import ConfigError, EvaluationError
from stagebench.ab_table import format_ab, regression_json, regression_line


def run(args: argparse.Namespace) -> int:
    if args.max_regression is not None and args.baseline is None:
        raise ConfigError("--max-regression needs --baseline BASE (the check of NEW against it)")
    if args.baseline is not None:
        return _check(args)
    if args.a_dirs or args.b_dirs:
        if not (args.a_dirs and args.b_dirs) or args.run_dirs:
            raise ConfigError("an A/B comparison takes --a DIR... and --b DIR..., nothing else")
        return _ab(args, args.a_dirs, args.b_dirs)
    if not args.run_dirs:
        raise ConfigError("nothing to compare: give run or suite directories")
    if len(args.run_dirs) == 2 and _is_ab_pair(*args.run_dirs):
        return _ab(args, [args.run_dirs[0]], [args.run_dirs[1]])
    return _ladder(args)


def _ladder(args: argparse.Namespace) -> int:
    run_dirs, rounds = ladder_runs(args.run_dirs)
    comparison = compare(run_dirs, allow_mixed=args.allow_mixed, rounds=rounds)
    if args.json:
        doc = {"stages": [r.as_dict() for r in comparison.rows],
               "differences": comparison.differences,
               "significance": comparison.significance}  # fmt: skip
        print(json.dumps(doc, indent=2, default=str))
        return 0
    text = to_markdown if args.markdown else format_table
    print(text(comparison))
    return 0


def _ab(args: argparse.Namespace, a_paths: list[Path], b_paths: list[Path]) -> int:
    a_dirs, b_dirs = side_runs(a_paths), side_runs(b_paths)
    comparison = ab.compare_sides(a_dirs, b_dirs, allow_mixed=args.allow_mixed)
    if args.json:
        doc = {"a": [str(d) for d in a_dirs], "b": [str(d) for d in b_dirs]}
        print(json.dumps(doc | comparison.as_dict(), indent=2))
    else:
        print(format_ab(comparison, a_dirs, b_dirs))
    return 0


def _check(args: argparse.Namespace) -> int:
    """The regression check: exit 1 on a regression, 0 otherwise, 2 when the check could
    not be made (so that a CI job tells a slower NEW from a broken one)."""
    if len(args.run_dirs) != 1 or args.a_dirs or args.b_dirs:
        raise ConfigError("--baseline BASE takes exactly one NEW directory (a run or a suite)")
    limit = parse_share(args.max_regression or "0%", "--max-regression")
    try:
        base, new = side_runs([args.baseline]), side_runs(args.run_dirs)
        comparison = ab.compare_sides(base, new, allow_mixed=args.allow_mixed)
    except EvaluationError as err:
        raise ConfigError(str(err)) from err
    check = ab.regression(comparison, limit)
    for line in (*comparison.settings, *comparison.flags):
        print(f"WARNING: BASE (A) and NEW (B) differ: {line}", file=sys.stderr)
    if args.json:
        print(regression_line(check), file=sys.stderr)
        print(json.dumps(regression_json(check, comparison, base, new), indent=2))
    else:
        print(regression_line(check))
    return 1 if check.failed else 0


_SHARE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*")


def parse_share(text: str, option: str) -> float:
    """ "10%" or "10" → 0.1; ConfigError naming ``option`` for anything else."""
    found = _SHARE.fullmatch(text)
    if found is None:
        raise ConfigError(f"{option}: expected a percentage such as 10%, got {text!r}")
    return float(found.group(1)) / 100


def _is_ab_pair(first: Path, second: Path) -> bool:
    """Two suites, a suite and a run, or two runs of one stage: sides to compare."""
    kinds = [rundir.kind(p) for p in (first, second)]
    if "suite" in kinds:
        return True
    if kinds != ["run", "run"]:
        return False
    return read_summary(first)["run"]["stage"] == read_summary(second)["run"]["stage"]


def side_runs(paths: list[Path]) -> list[Path]:
    """The run directories one side stands for: a suite directory its runs, a run
    directory itself; EvaluationError naming anything else."""
    out: list[Path] = []
    for path in paths:
        found = rundir.kind(path)
        if found == "capacity":
            raise EvaluationError(
                f"{path} is a capacity search: compare its probes' run directories instead"
            )
        out += [r.path for r in rundir.suite_runs(path)] if found == "suite" else [path]
    return out


def ladder_runs(paths: list[Path]) -> tuple[list[Path], list[int] | None]:
    """The runs to compare and their rounds: a single suite directory (one with a
    comparison.json) stands for its runs and the rounds they were made in
    (:func:`ground.rundir.suite_runs`); run directories stand for themselves, without
    rounds."""
    if len(paths) != 1 or not (paths[0] / rundir.COMPARISON).is_file():
        return list(paths), None
    runs = rundir.suite_runs(paths[0])
    rounds = [r.round for r in runs]
    return [r.path for r in runs], None if None in rounds else rounds
