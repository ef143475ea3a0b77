"""``stagebench history``: the runs, suites and capacity searches of a results directory."""

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engines.registry import NAMES as ENGINES
from evaluator.comparison.differences import shown
from ground.errors import ConfigError
from ground.stages import STAGES
from stagebench.cli.shared import Subparsers, flag
from stagebench.config.layers import refuse_moved, section_classes
from stagebench.config.settings import RunConfig

if TYPE_CHECKING:
    from stagebench.history.entry import Entry


def add(sub: Subparsers) -> None:
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
        "--engine", choices=ENGINES, help="only entries this engine ran (default: all)"
    )
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
        "engine.spark.trigger_interval_ms=500 (SECTION.KEY as config show names it); "
        "repeatable (default: none)",
    )
    flag(
        parser,
        "--rebuild",
        "rebuild the index from the directories first (default: only when it is missing)",
    )
    flag(parser, "--json", "print JSON (default: a table)")
    flag(
        parser,
        "--steps",
        "print where each stage's p50 and p99 changed level, found by a test, and what "
        "differs across each step; exit 1 when the newest point is on a level a recent "
        "step made worse by more than --tolerance (default: the table)",
    )
    parser.add_argument(
        "--tolerance",
        metavar="PCT",
        type=_tolerance,
        default=0.10,
        help="with --steps: how much worse a new level may be before it fails (default: 10%%)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from stagebench.history import index as history_index
    from stagebench.history.table import format_history

    results = Path(args.results or RunConfig().results_dir)
    since = parse_since(args.since) if args.since else None
    settings = [parse_setting(text) for text in args.setting]
    if not results.is_dir():
        raise ConfigError(f"--results: {results} is not a directory")
    if args.rebuild or not history_index.is_current(results):
        for problem in history_index.rebuild(results):
            print(f"WARNING: not in the history: {problem}", file=sys.stderr)
    found = history_index.entries(results, args.stage, since, settings, args.engine)
    if args.steps:
        return _steps(found, args.tolerance)
    if args.json:
        print(json.dumps(history_index.as_json(found), indent=2))
    else:
        print(format_history(found))
    return 0


def _steps(found: list["Entry"], tolerance: float) -> int:
    """Print the steps; 1 when the newest point is on a worse level, 4 when no series
    is long enough to tell, else 0."""
    from stagebench.history.series import checkable, series_of, worse
    from stagebench.history.table import format_steps

    all_series = series_of(found)
    print(format_steps(all_series))
    if not checkable(all_series):
        print("no verdict: no series has the 4 points a step needs")
        return 4
    failed = worse(all_series, tolerance)
    for step in failed:
        print(
            f"WORSE: {step.series.name} {step.stat} is {step.step.change * 100:+,.1f} % since "
            f"{step.first.entry.id}, beyond the tolerance of {tolerance * 100:g} %"
        )
    if not failed:
        print(f"the newest points are on no level worse by more than {tolerance * 100:g} %")
    return 1 if failed else 0


def _tolerance(text: str) -> float:
    """ "10" or "10%" → 0.1."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a percentage such as 10 or 10%, got {text!r}")
    return value / 100


def parse_since(text: str) -> str:
    """A date or ISO time (UTC unless it names its zone) as the index stores times."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as err:
        raise ConfigError(
            f"--since: expected a date or ISO time such as 2026-11-26 or 2026-11-26T15:00, "
            f"got {text!r}"
        ) from err
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_setting(text: str) -> tuple[str, str]:
    """KEY=VALUE → (key, the value as the index shows it: "500" for 500 or 500.0)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(
            f"--setting: expected KEY=VALUE such as trigger_interval_ms=500, got {text!r}"
        )
    key, value = key.strip(), value.strip()
    section, _, name = key.rpartition(".")
    if section in ("run", "pipeline"):
        refuse_moved(section, name, "--setting", section_classes())
    try:
        return key, shown(float(value))
    except ValueError:
        return key, shown(value)
