"""``stagebench compare RUN_DIR...``: the cumulative stage table of evaluated runs."""

import argparse

from evaluator import compare


def run(args: argparse.Namespace) -> int:
    comparison = compare.compare(args.run_dirs, allow_mixed=args.allow_mixed)
    text = compare.to_markdown if args.markdown else compare.format_table
    print(text(comparison))
    if args.plots is not None:
        for path in compare.plot(comparison, args.plots, args.log_scale):
            print(f"wrote {path}")
    return 0
