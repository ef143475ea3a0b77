"""``stagebench compare RUN_DIR...``: the cumulative stage table of evaluated runs."""

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare runs stage by stage (cumulative increments)",
        description="Print one row per evaluated run, ordered by the stage ladder: p50/p95/p99 "
        "latency and the increment over the previous stage (difference of percentiles).",
    )
    parser.add_argument("run_dirs", nargs="+", type=Path, help="evaluated run directories")
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown instead of text (default: text)"
    )
    parser.add_argument(
        "--plots",
        type=Path,
        metavar="DIR",
        help="also write the comparison plots into DIR (default: no plots)",
    )
    parser.add_argument(
        "--log-scale", action="store_true", help="log-scale distributions (default: off)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evaluator import compare

    rows = compare.compare(args.run_dirs)
    print(compare.to_markdown(rows) if args.markdown else compare.format_table(rows))
    if args.plots is not None:
        for path in compare.plot(rows, args.plots, args.log_scale):
            print(f"wrote {path}")
    return 0
