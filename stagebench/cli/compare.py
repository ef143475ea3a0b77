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
import textwrap
from pathlib import Path

from evaluator.model.summary_file import load_summary
from ground import rundir
from ground.errors import ConfigError, EvaluationError
from stagebench.cli.shared import WIDE, Subparsers, flag

COMPARE = (
    "Three comparisons. The stage table: one row per stage of evaluated runs, "
    "ordered by the stage ladder, with p50/p95/p99 and the increment over the previous "
    "stage (difference of percentiles); a suite's directory stands for its runs with "
    "their rounds. An A/B comparison (two runs of one stage, two suite directories, or "
    "--a DIR... --b DIR...): the settings that differ, and the change of p50 and p99 of "
    "each stage with a 95 % interval and a verdict (faster, slower, no significant "
    "difference; withheld with fewer than 3 runs a side). A regression check "
    "(--baseline BASE NEW): exit 1 when NEW's p50 or p99 is significantly worse than "
    "BASE's by more than --max-regression, 4 when no change could be judged (fewer than 3 "
    "runs a side) unless --allow-no-verdict, 2 when it cannot be made, 0 otherwise."
)

EXAMPLES = """\
examples, one of each mode:
  stagebench compare results/20261205T002643Z-suite-2e25e59a
      the stage table of a suite (or of run directories of several stages)
  stagebench compare results/*-join-a0d1 results/*-join-b7e2
      A/B: two runs of one stage (or two suites, or --a DIR... --b DIR...)
  stagebench compare --baseline base/*-suite-* new/*-suite-* --max-regression 10%
      the regression check: exit 1 when NEW is significantly worse by more than 10 %"""


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare runs: the stage table, an A/B comparison, or a regression check",
        description=f"{textwrap.fill(COMPARE, 78)}\n\n{EXAMPLES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run_dirs", nargs="*", type=Path, metavar="DIR",
        help="evaluated run directories or suite directories (default: none)",
    )  # fmt: skip
    for side in ("a", "b"):
        parser.add_argument(
            f"--{side}", dest=f"{side}_dirs", nargs="+", type=Path, metavar="DIR",
            help=f"A/B: side {side.upper()}'s runs or suites (default: none)",
        )  # fmt: skip
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="BASE",
        help="check the one DIR given (NEW, a run or a suite) against BASE (a run or a "
        "suite, its repeats the runs of that side) (default: no check)",
    )
    parser.add_argument(
        "--max-regression",
        metavar="PERCENT",
        help="with --baseline: the worsening of p50 or p99 allowed, e.g. 10%% (default: 0%%, "
        "any significant worsening fails)",
    )
    flag(
        parser,
        "--allow-no-verdict",
        "with --baseline: pass (exit 0) when no change could be judged (default: exit 4)",
    )
    flag(parser, "--wide", WIDE)
    flag(parser, "--json", "print JSON instead of text (default: text)")
    flag(parser, "--markdown", "print Markdown instead of text (default: text)")
    flag(
        parser,
        "--allow-mixed",
        "stage table: compare runs that differ in more than stage and implementation "
        "(rate, workload, settings), the differences printed above the table; A/B: let the "
        "runs within a side differ (default: refuse)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    for option in ("max_regression", "allow_no_verdict"):
        if getattr(args, option) not in (None, False) and args.baseline is None:
            raise ConfigError(
                f"--{option.replace('_', '-')} needs --baseline BASE (the check of NEW against it)"
            )
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
    from evaluator.comparison.compare import compare
    from evaluator.comparison.table import format_table, to_markdown

    for path in args.run_dirs:
        rundir.kind(path)  # a path given by mistake is named before any is read
    run_dirs, rounds = rundir.ladder_runs(args.run_dirs)
    comparison = compare(run_dirs, allow_mixed=args.allow_mixed, rounds=rounds)
    if args.json:
        doc = {"stages": [r.as_dict() for r in comparison.rows],
               "engines": [pair.as_dict() for pair in comparison.engines],
               "differences": comparison.differences,
               "significance": comparison.significance}  # fmt: skip
        print(json.dumps(doc, indent=2, default=str))
        return 0
    print(to_markdown(comparison) if args.markdown else format_table(comparison, args.wide))
    return 0


def _ab(args: argparse.Namespace, a_paths: list[Path], b_paths: list[Path]) -> int:
    from evaluator.comparison import ab
    from stagebench.report.ab_table import format_ab

    a_dirs, b_dirs = rundir.side_runs(a_paths), rundir.side_runs(b_paths)
    comparison = ab.compare_sides(a_dirs, b_dirs, allow_mixed=args.allow_mixed)
    if args.json:
        doc = {"a": [str(d) for d in a_dirs], "b": [str(d) for d in b_dirs]}
        print(json.dumps(doc | comparison.as_dict(), indent=2))
    else:
        print(format_ab(comparison, a_dirs, b_dirs))
    return 0


def _check(args: argparse.Namespace) -> int:
    """The regression check: exit 1 on a regression, 4 on no verdict (unless allowed), 0
    otherwise, 2 when the check could not be made (so that a CI job tells a slower NEW from
    a broken one, and from one it could not judge)."""
    from evaluator.comparison import ab
    from stagebench.report.ab_table import exit_code, regression_json, regression_line

    if len(args.run_dirs) != 1 or args.a_dirs or args.b_dirs:
        raise ConfigError("--baseline BASE takes exactly one NEW directory (a run or a suite)")
    limit = parse_share(args.max_regression or "0%", "--max-regression")
    try:
        base, new = rundir.side_runs([args.baseline]), rundir.side_runs(args.run_dirs)
        comparison = ab.compare_sides(base, new, allow_mixed=args.allow_mixed)
    except EvaluationError as err:
        raise ConfigError(str(err)) from err
    check = ab.regression(comparison, limit)
    code = exit_code(check, args.allow_no_verdict)
    for line in (*comparison.settings, *comparison.flags):
        print(f"WARNING: BASE (A) and NEW (B) differ: {line}", file=sys.stderr)
    if args.json:
        print(regression_line(check), file=sys.stderr)
        print(json.dumps(regression_json(check, comparison, base, new, code), indent=2))
    else:
        print(regression_line(check))
    return code


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
    stages = [load_summary(p).run["stage"] for p in (first, second)]
    return stages[0] == stages[1]
