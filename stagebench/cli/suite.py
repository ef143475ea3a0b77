"""``stagebench suite``: the stage ladder with identical settings, in rounds, and the increments."""

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from engines.registry import NAMES, engine_for, triggers
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import MAIN_LINE, PROCESSING_TIME, STAGES
from stagebench.cli.options import run_overrides
from stagebench.cli.shared import WIDE, Subparsers, add_run_arguments, flag, say_what_stays_running
from stagebench.config.faults import BROKER_FAULTS
from stagebench.config.layers import load
from stagebench.config.roles import validate
from stagebench.config.settings import RunConfig
from stagebench.suite.entry import entries, entry_run, parts


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "suite",
        help="run the stage ladder and print the increment table",
        description="Run each stage in turn with identical settings (but for the engine, "
        "implementation or trigger an entry of --stages names), then compare them: "
        "p50/p95/p99 per stage and the increment each adds over the stage it builds on. "
        "Writes results/<time>-suite-<id>/comparison.{json,md} and report.html.",
    )
    parser.add_argument(
        "--stages",
        default=",".join(MAIN_LINE),
        help="comma-separated stages (any order: each round draws its own), each "
        "[ENGINE:]STAGE[/IMPL][@MODE]: ENGINE: names the engine that runs it (default: "
        "--engine), /custom runs a window's custom implementation beside others, @MODE "
        "a stage in another execution mode of its engine beside the others' trigger, e.g. "
        "tumbling,tumbling/custom,tumbling-union,spark:tumbling-union@real-time "
        f"(stages: {', '.join(STAGES)}; engines: {', '.join(NAMES)}; modes: "
        f"{', '.join(triggers())}; default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=_rounds,
        default=1,
        help="rounds: each runs every stage once, in a random order of its own (in a shared "
        "application the first round's is fixed: window stages first, the floor next, the "
        "stateless Spark stages last); with 3 or more, increments are judged on the "
        "per-round differences; auto: 3, then as many in all as the differences within "
        "noise need, as far as --budget holds them (default: %(default)s)",
    )
    parser.add_argument(
        "--budget",
        metavar="TIME",
        help="with --repeat auto: the time the suite may take, such as 90m, 2h or 5400 "
        "(seconds), at the pace of its first 3 rounds (default: none)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the rounds' random stage order, to repeat a suite's order (default: a "
        "new one, printed and kept in comparison.json)",
    )
    flag(
        parser,
        "--no-floor",
        "leave out the floor (a plain Kafka consume→produce loop), which otherwise "
        "runs in every round so that ingest's increment is measured over it (default: run "
        "it)",
    )
    flag(parser, "--wide", WIDE)
    add_run_arguments(parser)
    parser.set_defaults(handler=run)


def _rounds(text: str) -> int | None:
    """``--repeat``: a whole number of rounds, or None for ``auto``."""
    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of rounds or auto, got {text!r}"
        ) from None


def run(args: argparse.Namespace) -> int:
    from evaluator.comparison.table import format_table
    from stagebench.capacity.search import parse_budget
    from stagebench.console import Console
    from stagebench.history.index import record_or_warn
    from stagebench.suite.rounds import run_suite

    if args.repeat is not None and args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    if (args.repeat is None) != (args.budget is not None):
        raise ConfigError(
            "--repeat auto needs --budget, such as --budget 2h"
            if args.repeat is None
            else "--budget goes with --repeat auto"
        )
    try:
        budget_s = parse_budget(args.budget) if args.budget else None
    except ValueError as err:
        raise ConfigError(f"--budget: {err}") from err
    settings = load(args.config, run_overrides(args))
    base = from_mapping(RunConfig, settings.section("run"), "run")
    stages_impl = entries(args.stages, base.impl, base.engine)
    if not args.no_floor and "floor" not in (parts(key)[1] for key, _ in stages_impl):
        floor = engine_for("floor")
        if base.fault not in (None, *BROKER_FAULTS, *floor.faults):
            print(f"the floor is left out: it cannot take {base.fault}", file=sys.stderr)
        else:  # so that ingest's increment is measured over Kafka's own, in the one
            # mode the floor has, whatever [pipeline] trigger the others take
            trigger = settings.section("pipeline").get("trigger", PROCESSING_TIME)
            other = trigger not in floor.triggers("floor")
            stages_impl.insert(0, (f"floor@{PROCESSING_TIME}" if other else "floor", "builtin"))
    for entry in stages_impl:  # every run's settings, before the first run starts
        validate(*entry_run(base, settings, entry))
    suite = run_suite(
        stages_impl, args.repeat, replace(base, impl="builtin"), settings, Console(), args.seed,
        budget_s,
    )  # fmt: skip
    print(format_table(suite.comparison, wide=args.wide))
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
    say_what_stays_running(base.bootstrap)
    return 1 if suite.incomplete or suite.failed else 0
