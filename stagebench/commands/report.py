"""``stagebench report PATH...``: report.html for results directories, drawn from their files."""

import argparse

from stagebench.html_report import write


def run(args: argparse.Namespace) -> int:
    for path in args.paths:
        print(f"wrote {write(path).describe()}")
    return 0
