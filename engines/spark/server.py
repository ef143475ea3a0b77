"""One Spark application that runs a bench's queries, in turn or side by side.

A job of its own per run starts a JVM that has compiled nothing: HotSpot's JIT keeps
compiling Spark's code for minutes, and every run of a suite would wait for it again.
A suite instead starts this application once, warms it up, and runs each stage's
query in it (docs/method.md#one-application-per-suite). The bench starts
``python -m engines.spark.server --app-dir DIR`` with ``DIR/application.json``
(``{"master": ..., "spark_conf": {...}}``) and sends commands on standard input, one
JSON object a line:

- ``{"start": "RUN_DIR/pipeline.json"}``: start the query that pipeline.json describes
  (as :mod:`engines.spark.job` would); its listener events go to
  ``RUN_DIR/engine_progress.jsonl`` and ``RUN_DIR/pipeline.ready`` (the application
  id) is created once it is ready;
- ``{"stop": "RUN_DIR"}``: stop that query; ``RUN_DIR/pipeline.stopped`` once stopped.

A query that cannot start or fails writes its error to ``RUN_DIR/pipeline.failed``;
the application goes on. A query's Spark settings must equal the application's,
which the bench checks before it sends one here
(:meth:`SparkSettings.session_conf`). ``DIR/application.ready`` holds the
application id once the session runs. The end of standard input (the bench is
gone), SIGTERM, SIGINT and SIGHUP stop every query and the session.
"""

import argparse
import contextlib
import json
import logging
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.config import PipelineConfig
from engines.process import load_config, stop_event
from engines.spark.job import first_line, plain_local_files, prepare, ready, start
from engines.spark.progress import ProgressWriter
from engines.spark.session import build_session
from engines.spark.settings import REAL_TIME, spark_settings
from engines.spark.sink import query_name
from ground import files, rundir
from ground.errors import StagebenchError

log = logging.getLogger(__name__)

POLL_S = 0.2
"""How often commands and the stop event are looked at, and queries that are not ready
yet polled (a run waits for them)."""
WATCH_S = 2.0
"""How often ready queries are polled: each poll calls into the driver JVM, whose
cores the queries' micro-batches need (docs/method.md#one-application-per-suite), and
the bench checks a run's health only every 2 s."""


@dataclass
class _Query:
    run_dir: Path
    config: PipelineConfig
    query: Any
    ready: bool = False


class Server:
    """The application's session and its running queries, by run directory."""

    def __init__(self, spark: Any, conf: dict[str, Any]):
        self.spark, self.conf = spark, conf
        self.progress = ProgressWriter()
        spark.streams.addListener(self.progress)
        self.app_id: str = spark.sparkContext.applicationId
        self.queries: dict[Path, _Query] = {}
        self.polled = 0.0

    def handle(self, command: dict[str, Any]) -> None:
        """Carry out one command; whatever goes wrong with it is its query's failure,
        written to its run directory, and the application goes on."""
        if "start" in command:
            config_file = Path(command["start"])
            run_dir = config_file.parent
            try:
                self._start(config_file, run_dir)
            except Exception as err:
                _fail(run_dir, err)
        elif "stop" in command:
            run_dir = Path(command["stop"])
            try:
                self._stop(run_dir)
            except Exception as err:
                _fail(run_dir, err)
            finally:
                (run_dir / rundir.STOPPED).touch()
        else:
            log.error("unknown command %s", command)

    def _start(self, config_file: Path, run_dir: Path) -> None:
        config = load_config(config_file)
        if spark_settings(config).session_conf(config) != self.conf:
            raise StagebenchError(
                "its Spark settings differ from the application's: it needs a job of its own"
            )
        prepare(config, run_dir)
        self.progress.route(query_name(config), run_dir / rundir.PROGRESS)
        query = start(self.spark, config)
        log.info("query %s started: %s", query.id, run_dir)
        self.queries[run_dir] = _Query(run_dir, config, query)

    def _stop(self, run_dir: Path) -> None:
        """Stop the query; one that had already failed (since the last poll) says so."""
        running = self.queries.pop(run_dir, None)
        if running is None:
            return
        if running.query.isActive:
            running.query.stop()
        elif error := running.query.exception():
            _fail(run_dir, error)

    def poll_due(self, now: float) -> bool:
        """Whether to poll the queries at ``now`` (monotonic seconds): every ``POLL_S``
        while one is not ready yet, else every ``WATCH_S``."""
        unready = any(not running.ready for running in self.queries.values())
        return unready or now >= self.polled + WATCH_S

    def poll(self, now: float) -> None:
        """Mark ready queries; report and forget those that stopped by themselves."""
        self.polled = now
        for run_dir, running in list(self.queries.items()):
            try:
                self._poll(run_dir, running)
            except Exception as err:
                _fail(run_dir, err)
                del self.queries[run_dir]

    def _poll(self, run_dir: Path, running: _Query) -> None:
        query = running.query
        if not query.isActive:
            error = query.exception()
            _fail(run_dir, error or StagebenchError("the query stopped by itself"))
            del self.queries[run_dir]
            return
        if not running.ready and ready(query, running.config.trigger == REAL_TIME):
            files.write(run_dir / rundir.READY, self.app_id + "\n")
            running.ready = True

    def close(self) -> None:
        for run_dir in list(self.queries):
            self.handle({"stop": str(run_dir)})


def _fail(run_dir: Path, err: BaseException) -> None:
    log.error("query of %s failed: %s", run_dir, err)
    files.write(run_dir / rundir.FAILED, first_line(err) + "\n")


def _commands(stop: threading.Event) -> "queue.Queue[dict[str, Any]]":
    """Standard input's commands; its end sets ``stop`` (the bench is gone)."""
    commands: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        # unbuffered: a daemon thread inside a buffered read would hold its lock when
        # the interpreter shuts down
        pending = b""
        while chunk := os.read(sys.stdin.fileno(), 4096):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                try:
                    commands.put(json.loads(line))
                except ValueError:
                    log.error("not a command: %r", line)
        log.warning("the process that started this application is gone: stopping")
        stop.set()

    threading.Thread(target=read, name="commands", daemon=True).start()
    return commands


def serve(app_dir: Path, stop: threading.Event, commands: "queue.Queue[dict[str, Any]]") -> None:
    conf = json.loads((app_dir / rundir.APPLICATION_CONF).read_text())
    spark = build_session("stagebench-suite", conf["master"], conf["spark_conf"])
    plain_local_files(spark)  # harmless where every checkpoint has a scheme
    server = Server(spark, conf)
    files.write(app_dir / rundir.APPLICATION_READY, spark.sparkContext.applicationId + "\n")
    try:
        while not stop.is_set():
            with contextlib.suppress(queue.Empty):
                server.handle(commands.get(timeout=POLL_S))
            now = time.monotonic()
            if server.poll_due(now):
                server.poll(now)
    finally:
        server.close()
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="engines.spark.server",
        description="Run the queries a bench sends on standard input in one Spark "
        "application, until standard input closes or a signal comes.",
    )
    parser.add_argument("--app-dir", type=Path, required=True,
                        help="directory with application.json (required)")  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    stop = stop_event()
    try:
        serve(args.app_dir, stop, _commands(stop))
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
