"""The ``stagebench`` command: the parser, logging, signals, and the dispatch to a handler.

Each command is one module of this package: ``add`` builds its parser, and its handler
(the function the parser names) runs it. Building the parsers is cheap: for defaults and
choices they import only the configuration dataclasses, the stage, workload and fault
tables and the option tables (:mod:`stagebench.cli.options`); a handler imports what its
command runs when it runs, so ``--help`` loads neither pandas, numpy nor an engine (a test
asserts it). This module is the one place that turns a :class:`StagebenchError` into
``ERROR: …`` and an exit code.
"""

import argparse
import logging
import os
import signal
import sys
from typing import Any

from ground.errors import StagebenchError
from ground.kafka import client
from stagebench import __version__
from stagebench.cli import (
    broker,
    capacity,
    compare,
    config,
    evaluate,
    history,
    pipeline,
    publish,
    report,
    run,
    site,
    smoke,
    suite,
    topics,
)  # fmt: skip

COMMANDS = (broker, topics, smoke, publish, pipeline, evaluate, compare, report, run, suite,
            capacity, config, history, site)  # fmt: skip
"""The subcommands in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stagebench",
        description="Measure the latency each stage of a streaming pipeline adds, "
        "with every timestamp taken from one Kafka broker's clock (LogAppendTime).",
    )
    parser.add_argument("--version", action="version", version=f"stagebench {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="more log output (-vv: debug) (default: warnings and errors only)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add(subparsers)
    return parser


def _configure_logging(verbose: int) -> None:
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)],
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("py4j", "kafka", "urllib3", "docker"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # librdkafka logs every reconnect attempt; stagebench reports the failures that matter
    logging.getLogger("rdkafka").setLevel(logging.DEBUG if verbose > 1 else logging.CRITICAL)


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return 2
    _configure_logging(args.verbose)
    # SIGTERM (timeout, CI runners, kill) and SIGHUP (a closed terminal) stop a command
    # the way Ctrl-C does: runs stop their job and publisher and keep their results
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    try:
        client.librdkafka()  # a client properties file is refused before anything starts
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `stagebench … | head`: the reader has what it wanted
        # Python would report the pipe again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
