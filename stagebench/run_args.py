"""Arguments of ``run`` and ``suite``, mapped onto the ``[run]`` config table."""

from pathlib import Path
from typing import Any

from stagebench.cli_args import add_bootstrap

# (option, [run] key, type, help); None defaults leave the config file's or RunConfig's value
RUN_OPTIONS: list[tuple[str, str, Any, str]] = [
    ("--rate", "rate", float, "messages/s over both input topics (default: 400)"),
    ("--duration", "duration_s", float, "measured seconds per run (default: 60)"),
    ("--warmup", "warmup_s", float, "seconds trimmed at the start (default: 10 %% of the run)"),
    ("--tail", "tail_s", float, "seconds published after the measured period (default: 5)"),
    ("--partitions", "partitions", int, "partitions per topic (default: 1)"),
    ("--master", "master", str, "Spark master, e.g. spark://host:7077 (default: local[2])"),
    (
        "--checkpoint-root",
        "checkpoint_root",
        str,
        "Spark checkpoint location every cluster node reaches (default: the run directory)",
    ),
    ("--results", "results_dir", str, "directory for run directories (default: results)"),
]


def add_run_arguments(parser) -> None:
    parser.add_argument(
        "--config", type=Path, help="TOML file with [run], [publisher], [pipeline], [evaluator]"
    )
    parser.add_argument(
        "--impl",
        choices=("builtin", "custom"),
        help="window implementation: Spark's operators or transformWithStateInPandas "
        "(default: builtin)",
    )
    parser.add_argument(
        "--workload",
        choices=("latency", "single-burst", "periodic-burst"),
        help="constant low rate; a backlog published before the job starts; or a burst "
        "every 10 s on top of the rate (default: latency)",
    )
    for option, key, kind, help_text in RUN_OPTIONS:
        metavar = option.lstrip("-").upper().replace("-", "_")
        parser.add_argument(option, dest=key, metavar=metavar, type=kind, help=help_text)
    add_bootstrap(parser)


def run_overrides(args, **extra: Any) -> dict[str, dict[str, Any]]:
    """The command line's ``[run]`` values (only those given)."""
    keys = [key for _, key, _, _ in RUN_OPTIONS] + ["impl", "workload", "bootstrap"]
    values = {key: getattr(args, key) for key in keys} | extra
    return {"run": {key: value for key, value in values.items() if value is not None}}
