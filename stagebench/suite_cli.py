"""``stagebench suite``: the stage ladder with identical settings, and the increments."""

import sys

from stagebench.run_args import add_run_arguments, run_overrides


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "suite",
        help="run the stage ladder and print the increment table",
        description="Run each stage in turn with identical settings, then compare them: "
        "p50/p95/p99 per stage and the increment each adds over the previous stage. "
        "Writes results/<time>-suite-<id>/comparison.{json,md} and plots.",
    )
    parser.add_argument(
        "--stages",
        default="ingest,parse,join,tumbling,sliding",
        help="comma-separated stages, in ladder order (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per stage; medians reported (default: 1)"
    )
    add_run_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from dataclasses import replace

    from evaluator.compare import format_table
    from stagebench.config import from_mapping
    from stagebench.console import Console
    from stagebench.errors import ConfigError
    from stagebench.runner import RunConfig
    from stagebench.schema import STAGES
    from stagebench.settings import load
    from stagebench.suite import run_suite

    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise ConfigError(f"unknown stage(s) {unknown} (stages: {', '.join(STAGES)})")
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    settings = load(args.config, run_overrides(args))
    base = from_mapping(RunConfig, settings.section("run"), "run")
    if base.impl == "custom":
        # custom variants exist only for the windows; earlier stages run Spark's own operators
        stages_impl = [(s, "custom" if s in ("tumbling", "sliding") else "builtin") for s in stages]
    else:
        stages_impl = [(s, base.impl) for s in stages]
    suite_dir, rows, incomplete = run_suite(
        stages_impl, args.repeat, replace(base, impl="builtin"), settings, Console()
    )
    print(format_table(rows))
    print(f"\nsuite results: {suite_dir}")
    for run_dir in incomplete:
        print(f"WARNING: {run_dir} has missing outputs (see its summary.json)", file=sys.stderr)
    return 1 if incomplete else 0
