"""``stagebench suite``: the stage ladder with identical settings, in rounds, and the increments."""

import sys
from dataclasses import replace
from pathlib import Path

from evaluator.comparison_table import format_table
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import STAGES, stage
from stagebench.console import Console
from stagebench.faults import ENGINE_FAULTS
from stagebench.history_index import record_or_warn
from stagebench.options import run_overrides
from stagebench.settings import RunConfig, load
from stagebench.suite import run_suite


def run(args) -> int:
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise ConfigError(f"unknown stage(s) {unknown} (stages: {', '.join(STAGES)})")
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    settings = load(args.config, run_overrides(args))
    base = from_mapping(RunConfig, settings.section("run"), "run")
    if not args.no_floor and "floor" not in stages:
        if base.fault in ENGINE_FAULTS:  # the floor is no Spark job: nothing to restart
            print(f"the floor is left out: {base.fault} needs a Spark job", file=sys.stderr)
        else:  # so that ingest's increment is measured over Kafka's own
            stages.insert(0, "floor")
    if base.impl == "custom":
        # custom variants exist only for the windows; earlier stages run Spark's own operators
        stages_impl = [(s, "custom" if stage(s).custom else "builtin") for s in stages]
    else:
        stages_impl = [(s, base.impl) for s in stages]
    suite = run_suite(
        stages_impl, args.repeat, replace(base, impl="builtin"), settings, Console(), args.seed
    )
    print(format_table(suite.comparison))
    print(f"\norder (seed {suite.order.seed}):")
    print("\n".join(f"  {line}" for line in suite.order.lines()))
    print(f"\nreport: {suite.page.describe()}")
    print(f"\nsuite results: {suite.suite_dir}")
    if warning := record_or_warn(Path(base.results_dir), suite.suite_dir):
        print(f"WARNING: {warning}", file=sys.stderr)
    for run_dir in suite.incomplete:
        print(
            f"WARNING: {run_dir} has missing outputs or is not trusted (see its summary.json)",
            file=sys.stderr,
        )
    for failed in suite.failed:
        print(
            f"WARNING: round {failed['round']}, stage {failed['stage']} ({failed['impl']}) "
            f"failed: {failed['error']}",
            file=sys.stderr,
        )
    return 1 if suite.incomplete or suite.failed else 0
