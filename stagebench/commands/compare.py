"""``stagebench compare RUN_DIR...``: the cumulative stage table of evaluated runs."""

import argparse

from evaluator import compare


def run(args: argparse.Namespace) -> int:
    rows = compare.compare(args.run_dirs)
    print(compare.to_markdown(rows) if args.markdown else compare.format_table(rows))
    if args.plots is not None:
        for path in compare.plot(rows, args.plots, args.log_scale):
            print(f"wrote {path}")
    return 0
