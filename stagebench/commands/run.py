"""``stagebench run``: one complete benchmark run of one stage."""

import sys
from pathlib import Path

from ground.config import from_mapping
from stagebench.history_index import record_or_warn
from stagebench.options import run_overrides
from stagebench.runner import execute
from stagebench.settings import RunConfig, load
from stagebench.summary_table import format_runs


def run(args) -> int:
    settings = load(args.config, run_overrides(args, stage=args.stage))
    config = from_mapping(RunConfig, settings.section("run"), "run")
    result = execute(config, settings)
    print(format_runs([result.summary]))
    if result.page is not None:
        print(f"\nreport: {result.page.describe()}")
    print(f"\nresults: {result.run_dir}")
    if warning := record_or_warn(Path(config.results_dir), result.run_dir):
        print(f"WARNING: {warning}", file=sys.stderr)
    summary = result.summary
    return 1 if summary["trusted"] is False or summary["records"]["missing"] else 0
