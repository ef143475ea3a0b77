"""``stagebench run``: one complete benchmark run of one stage."""

import argparse
import sys
from pathlib import Path

from ground.config import from_mapping
from stagebench.cli.fields import add_field
from stagebench.cli.options import APPLICATION_FIELDS, run_overrides
from stagebench.cli.shared import WIDE, Subparsers, add_run_arguments, flag, say_what_stays_running
from stagebench.config.layers import load
from stagebench.config.settings import RunConfig


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "run",
        help="one complete benchmark run of one stage",
        description="Fresh topics → the engine's job up to STAGE → publisher → drain → evaluation. "
        "Prints the latency table and writes everything to results/<time>-<stage>-<id>/. "
        "Ctrl-C stops everything cleanly and keeps what was collected.",
    )
    add_field(parser, RunConfig, "stage")
    flag(parser, "--wide", WIDE)
    add_run_arguments(parser, skip=APPLICATION_FIELDS)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evaluator.model.summary_file import is_incomplete
    from stagebench.history.index import record_or_warn
    from stagebench.report.summary_table import format_runs
    from stagebench.run.root import execute

    settings = load(args.config, run_overrides(args, stage=args.stage))
    config = from_mapping(RunConfig, settings.section("run"), "run")
    result = execute(config, settings)
    print(format_runs([result.summary], wide=args.wide))
    if result.page is not None:
        print(f"\nreport: {result.page.describe()}")
    print(f"\nresults: {result.run_dir}")
    if warning := record_or_warn(Path(config.results_dir), result.run_dir):
        print(f"WARNING: {warning}", file=sys.stderr)
    say_what_stays_running(config.bootstrap)
    return 1 if is_incomplete(result.summary) else 0
