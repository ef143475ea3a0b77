"""The job process's side of the hand-off from a run: its configuration, its stop.

The bench writes ``pipeline.json`` into the run directory and starts a job
(``python -m engines.spark.job`` for Spark stages, ``python -m engines.floor.loop`` for
the floor) with ``--config`` pointing at it. Both stop on SIGTERM, SIGINT and
SIGHUP, and with ``--parent-watch`` when their standard input closes: the
runner keeps a pipe to it open for as long as it lives, so a job never outlives
its run, even when the runner is killed with SIGKILL.
"""

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from engines.config import PipelineConfig
from ground.config import from_mapping
from ground.errors import ConfigError, StagebenchError

log = logging.getLogger(__name__)

JobFunction = Callable[[PipelineConfig, Path, float | None, threading.Event, bool], int]
"""``job(config, run_dir, max_seconds, stop, resume)``: runs until ``stop`` or
``max_seconds``; ``resume`` continues from the checkpoint of an earlier job of the run."""


def load_config(path: Path) -> PipelineConfig:
    """The PipelineConfig of a ``pipeline.json`` (its ``pipeline`` table, or a flat one)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise ConfigError(f"pipeline configuration {path} not found") from err
    except ValueError as err:
        raise ConfigError(f"pipeline configuration {path} is not JSON: {err}") from err
    if not isinstance(data, dict):
        raise ConfigError(f"pipeline configuration {path} must be a JSON object")
    return from_mapping(PipelineConfig, data.get("pipeline", data), "pipeline")


def stop_event(parent_watch: bool = False) -> threading.Event:
    """An event set by SIGTERM, SIGINT or SIGHUP, and (``parent_watch``) when stdin closes."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    if parent_watch:

        def wait() -> None:
            # unbuffered: a daemon thread inside a buffered read would hold its lock
            # when the interpreter shuts down
            while os.read(sys.stdin.fileno(), 4096):
                pass
            log.warning("the process that started this job is gone: stopping")
            stop.set()

        threading.Thread(target=wait, name="parent-watch", daemon=True).start()
    return stop


def main(job: JobFunction, prog: str, description: str, argv: list[str] | None = None) -> int:
    """The command line of a job process: ``--config pipeline.json [--run-dir DIR] …``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", type=Path, required=True, help="pipeline.json (required)")
    parser.add_argument(
        "--run-dir", type=Path, help="where progress goes (default: the config's directory)"
    )
    parser.add_argument(
        "--max-seconds", type=float, help="stop after this long (default: at SIGTERM/SIGINT)"
    )
    parser.add_argument(
        "--parent-watch",
        action="store_true",
        help="stop when standard input closes, i.e. when the starting process dies "
        "(default: off; a run turns it on)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint of an earlier job of this run directory, as after "
        "an engine restart (default: refuse a used run directory or checkpoint)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        config = load_config(args.config)
        stop = stop_event(args.parent_watch)
        return job(config, args.run_dir or args.config.parent, args.max_seconds, stop, args.resume)
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
