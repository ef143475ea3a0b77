"""The parsers of the commands that read results directories: compare, history, report."""

from pathlib import Path

from ground.stages import STAGES
from stagebench.parsers.shared import Subparsers, flag, handler
from stagebench.settings import RunConfig

COMPARE = (
    "Three comparisons. The stage table: one row per stage of evaluated runs, "
    "ordered by the stage ladder, with p50/p95/p99 and the increment over the previous "
    "stage (difference of percentiles); a suite's directory stands for its runs with "
    "their rounds. An A/B comparison (two runs of one stage, two suite directories, or "
    "--a DIR... --b DIR...): the settings that differ, and the change of p50 and p99 of "
    "each stage with a 95 % interval and a verdict (faster, slower, no significant "
    "difference; withheld with fewer than 3 runs a side). A regression check "
    "(--baseline BASE NEW): exit 1 when NEW's p50 or p99 is significantly worse than "
    "BASE's by more than --max-regression, 0 otherwise, 2 when it cannot be made."
)


def compare(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare runs: the stage table, an A/B comparison, or a regression check",
        description=COMPARE,
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
    flag(parser, "--json", "print JSON instead of text (default: text)")
    flag(parser, "--markdown", "print Markdown instead of text (default: text)")
    flag(
        parser,
        "--allow-mixed",
        "stage table: compare runs that differ in more than stage and implementation "
        "(rate, workload, settings), the differences printed above the table; A/B: let the "
        "runs within a side differ (default: refuse)",
    )
    handler(parser, "compare:run")


def history(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "history",
        help="list the runs, suites and capacity searches of a results directory",
        description="Every run, suite and capacity search is recorded when it ends in an "
        "index of its results directory (history.sqlite): time, stage, settings, commit, "
        "versions, machine and pace, p50 and p99 with intervals, trusted, steady, warnings. "
        "The index is rebuilt from the directories when it is missing or with --rebuild, so "
        "deleting it loses nothing.",
    )
    parser.add_argument(
        "--results", type=Path, help=f"the results directory (default: {RunConfig().results_dir})"
    )
    parser.add_argument("--stage", choices=STAGES, help="only entries of this stage (default: all)")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only entries from this date or ISO time on, UTC unless it says otherwise "
        "(2026-11-26, 2026-11-26T15:00) (default: all)",
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only entries run with this setting, e.g. trigger_interval_ms=500 or "
        "pipeline.partitions=4; repeatable (default: none)",
    )
    flag(
        parser,
        "--rebuild",
        "rebuild the index from the directories first (default: only when it is missing)",
    )
    flag(parser, "--json", "print JSON (default: a table)")
    handler(parser, "history:run")


def report(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "report",
        help="write report.html for results directories (runs, suites, capacity searches)",
        description="Draw one self-contained page, report.html, into each results directory "
        "given: a run's (latency through the warm-up and the measured period, its "
        "distribution, throughput, resources, warnings, conditions, configuration), a suite's "
        "(the stage ladder and its runs together) or a capacity search's (the probes on the "
        "offered rate and the deciding probes through time). The plots are interactive and "
        "their scripts embedded, so the page opens offline. run, suite, capacity and evaluate "
        "write it themselves; this draws it again, from the directory's files alone.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="results directories: runs, suites, capacity searches (default: none; one at least)",
    )
    handler(parser, "report:run")
