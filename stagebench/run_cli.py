"""``stagebench run``: one complete benchmark run of one stage."""

from stagebench.run_args import add_run_arguments, run_overrides


def register(subparsers) -> None:
    from stagebench.schema import STAGES

    parser = subparsers.add_parser(
        "run",
        help="one complete benchmark run of one stage",
        description="Fresh topics → Spark job up to STAGE → publisher → drain → evaluation. "
        "Prints the latency table and writes everything to results/<time>-<stage>-<id>/. "
        "Ctrl-C stops everything cleanly and keeps what was collected.",
    )
    parser.add_argument(
        "--stage", choices=STAGES, help="last stage of the pipeline (default: ingest)"
    )
    add_run_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from stagebench.config import from_mapping
    from stagebench.runner import RunConfig, execute
    from stagebench.settings import load
    from stagebench.summary_table import format_runs

    settings = load(args.config, run_overrides(args, stage=args.stage))
    config = from_mapping(RunConfig, settings.section("run"), "run")
    result = execute(config, settings)
    print(format_runs([result.summary]))
    print(f"\nresults: {result.run_dir}")
    return 0 if not result.summary["records"]["missing"] else 1
