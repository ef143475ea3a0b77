"""The ``stagebench`` command: argparse subcommands dispatched from a table.

Each role registers its own subcommands (``register(subparsers)`` in its
``cli`` module), imported only when the command line names it, so ``--help``
stays fast and a heavy import (pyspark, pandas) happens only where it is used.
This module is the one place that turns a :class:`StagebenchError` into
``ERROR: …`` and an exit code.
"""

import argparse
import importlib
import logging
import sys

from stagebench import __version__
from stagebench.errors import StagebenchError

log = logging.getLogger(__name__)

# subcommand -> (module with register(subparsers), one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "broker": ("stagebench.broker_cli", "start, stop or inspect the embedded Kafka broker"),
    "topics": ("stagebench.topics_cli", "create or check benchmark topics (LogAppendTime, leader)"),
    "smoke": ("stagebench.smoke", "check the whole chain: broker, topics, Spark reads Kafka"),
    "publish": ("publisher.cli", "publish NDW-style speed/flow observations at a set rate"),
    "pipeline": ("pipelines.cli", "run the Spark pipeline up to and including a stage"),
    "evaluate": ("evaluator.cli", "compute latencies of a run from broker timestamps"),
    "compare": ("evaluator.compare_cli", "compare runs stage by stage (cumulative increments)"),
    "run": ("stagebench.run_cli", "one complete benchmark run of one stage"),
    "suite": ("stagebench.suite_cli", "run the stage ladder and print the increment table"),
    "config": ("stagebench.config_cli", "show the effective configuration and its sources"),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stagebench",
        description="Measure the latency each stage of a streaming pipeline adds, "
        "with every timestamp taken from one Kafka broker's clock (LogAppendTime).",
    )
    parser.add_argument("--version", action="version", version=f"stagebench {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in COMMANDS.items():
        if name == wanted:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
        if args.verbose
        else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("py4j", "kafka", "urllib3", "docker"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # librdkafka logs every reconnect attempt; stagebench reports the failures that matter
    logging.getLogger("rdkafka").setLevel(logging.DEBUG if args.verbose > 1 else logging.CRITICAL)
    try:
        return int(args.func(args) or 0)
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
