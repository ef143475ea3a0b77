"""Options several commands share: Kafka's address, the ``[run]`` options, switches."""

import argparse
import os
import sys
from pathlib import Path

from ground import envvars
from stagebench.cli.fields import add_field
from stagebench.cli.options import RUN_FIELDS, engine_options
from stagebench.config.layers import SET
from stagebench.config.settings import RunConfig

Subparsers = argparse._SubParsersAction


WIDE = (
    "print every column, the notes on each and every warning in full (default: the main "
    "columns within 100 characters, a one-line key, one line per warning's cause)"
)
"""The help of ``--wide``, an option of every command that prints a table of runs."""


def flag(parser: argparse.ArgumentParser, option: str, text: str) -> None:
    """An on/off switch, off unless given."""
    parser.add_argument(option, action="store_true", help=text)


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap",
        metavar="HOST:PORT",
        help=f"Kafka to use (default: ${envvars.BOOTSTRAP}, else the running embedded broker, "
        "else a newly started one)",
    )


def _warmup(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected auto or seconds, got {text!r}") from err


def add_run_arguments(
    parser: argparse.ArgumentParser,
    skip: tuple[str, ...] = (),
    shown: dict[str, str] | None = None,
) -> None:
    """``--config`` and the ``[run]`` options, but ``skip``: keys the command sets itself;
    ``shown``: the defaults the command has instead of RunConfig's."""
    parser.add_argument(
        "--config",
        type=Path,
        help="TOML file with [run], [publisher], [pipeline], [engine.<name>] (e.g. "
        "[engine.spark]), [evaluator] (default: none)",
    )
    for name in RUN_FIELDS:
        if name not in skip:
            option = "--results" if name == "results_dir" else None
            kind = _warmup if name == "warmup_s" else None
            add_field(parser, RunConfig, name, option, kind=kind, shown=(shown or {}).get(name))
    for _, cls, name in engine_options():
        add_field(parser, cls, name)
    parser.add_argument(
        SET,
        action="append",
        dest="set",
        metavar="TABLE.KEY=VALUE",
        help="set a key of a configuration file's table ([publisher], [pipeline], "
        "[engine.<name>], [evaluator]) as the file would, over --config's: "
        "engine.flink.buffer_timeout_ms=100, pipeline.watermark_delay_ms=1000, "
        "engine.spark.spark_conf.spark.sql.shuffle.partitions=4 (an entry of a table); "
        "VALUE is read as TOML, else as text; repeatable; `config show` lists every key "
        "(default: none)",
    )
    add_bootstrap(parser)


def say_what_stays_running(bootstrap: str | None) -> None:
    """The last lines of a command that used the embedded broker (given no ``bootstrap``,
    nor :data:`ground.envvars.BOOTSTRAP`): it is still up, what it holds, and the commands
    that free it."""
    from ground.kafka.broker import EmbeddedBroker

    if bootstrap or os.environ.get(envvars.BOOTSTRAP):
        return
    broker = EmbeddedBroker()
    if (held := broker.footprint()) is None:
        return
    memory, disk = held
    print(
        f"\nThe embedded broker is still running ({memory:,.0f} MB of memory, {disk:,.0f} MB "
        f"on disk in {broker.home}), for the next run: `stagebench broker stop` stops it and "
        "deletes its data; `stagebench topics prune` deletes the topics of runs older than "
        "a week.",
        file=sys.stderr,
    )
