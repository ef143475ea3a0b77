"""``stagebench report PATH...``: report.html for results directories, drawn from their files."""

import argparse
from pathlib import Path

from stagebench.cli.shared import Subparsers, flag


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "report",
        help="write report.html for results directories (runs, suites, capacity searches)",
        description="Draw one page, report.html, into each results directory given: a run's "
        "(latency through the warm-up and the measured period, its distribution, throughput, "
        "resources, warnings, conditions, configuration), a suite's (the stage ladder and its "
        "runs together), a capacity search's (the probes on the offered rate and the "
        "deciding probes through time) or a set of searches' (their latency against the "
        "offered rate in one chart). The plots are interactive and open offline: their "
        "script, plotly.js (4.8 MB), is written once beside the results directories and "
        "every page there loads it. run, suite, capacity and evaluate write the page "
        "themselves; this draws it again, from the directory's files alone.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="results directories: runs, suites, capacity searches (default: none; one at least)",
    )
    flag(
        parser,
        "--self-contained",
        "embed plotly.js in each page, to mail it or open it alone (default: load the copy "
        "beside the results directories)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from stagebench.report.html import write

    for path in args.paths:
        print(f"wrote {write(path, args.self_contained).describe()}")
    return 0
