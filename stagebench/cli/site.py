"""``stagebench site``: a static site of a results directory's history over time."""

import argparse
from pathlib import Path

from ground.errors import ConfigError
from stagebench.cli.history import parse_since
from stagebench.cli.shared import Subparsers
from stagebench.config.settings import RunConfig


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "site",
        help="write a static site of the history: each stage's latency over time, its steps",
        description="Write a static site (HTML and one copy of plotly.js; no server) from a "
        "results directory's history: per engine, stage and implementation, p50 and p99 "
        "over time with each point's 95 %% interval, a point whose run was untrusted, warned "
        "or not steady drawn apart, the x-axis switchable between time, commit and engine "
        "version, filters by setting, and each step (a change of level, as history --steps "
        "finds it) marked with what differs across it; each point links to its report.html "
        "and says how to run it again. A page for the suites' ladders and one for the "
        "capacity searches when the history has them.",
    )
    parser.add_argument(
        "--results", type=Path, help=f"the results directory (default: {RunConfig().results_dir})"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="where to write the site (default: RESULTS/site)"
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only entries from this date or ISO time on, as history --since (default: all)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from stagebench.site.build import build

    results = Path(args.results or RunConfig().results_dir)
    since = parse_since(args.since) if args.since else None
    if not results.is_dir():
        raise ConfigError(f"--results: {results} is not a directory")
    print(f"wrote {build(results, args.out or results / 'site', since).describe()}")
    return 0
