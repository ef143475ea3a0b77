"""``stagebench history``: the runs, suites and capacity searches of a results directory."""

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from engines.registry import NAMES as ENGINES
from evaluator.comparison.differences import shown
from ground.errors import ConfigError
from ground.stages import STAGES
from stagebench.cli.shared import Subparsers, flag
from stagebench.config.layers import refuse_moved, section_classes
from stagebench.config.settings import RunConfig


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
    if args.json:
        print(json.dumps(history_index.as_json(found), indent=2))
    else:
        print(format_history(found))
    return 0


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
