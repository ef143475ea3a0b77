"""A run's job process: its configuration hand-off, start, readiness, health, drain, stop.

The bench writes the job's :class:`PipelineConfig` to ``pipeline.json`` in the
run directory and starts the job module of the stage's engine (``python -m
engines.spark.job --config …``; :mod:`engines.base`) in its own process group (so
Ctrl-C reaches the runner, which stops the job in order).
The job's standard input is a pipe from the runner: when the runner dies, even
by SIGKILL, the pipe closes and the job stops itself (``--parent-watch``).
In a suite or a capacity search, a Spark run's query runs instead in their shared
application (:mod:`stagebench.run.application`), which the engine sends its start and stop.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engines.base import Engine
from engines.config import PipelineConfig
from engines.registry import chosen
from ground import files, rundir
from ground.config import as_dict
from ground.errors import ConfigError, EngineError
from stagebench.console import Update
from stagebench.run.application import Application, last_error

POLL_S = 0.5
QUERY_STOP_S = 60.0
"""The least wait for a query in a shared application to stop before the application
is stopped with it."""


def write_pipeline_config(run_dir: Path, config: PipelineConfig) -> Path:
    """Write ``run_dir/pipeline.json``, the job's configuration; refuses to overwrite one."""
    path = run_dir / rundir.PIPELINE
    if path.exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    doc = {"pipeline": as_dict(config)}
    files.write(path, json.dumps(doc, indent=2) + "\n")
    return path


class Job:
    """The job of one run (an engine's pipeline, or the floor): a child process, or a
    query in a shared ``application`` (Spark's)."""

    def __init__(
        self, run_dir: Path, config: PipelineConfig, application: Application | None = None
    ):
        self.dir, self.config, self.application = run_dir, config, application
        self.proc: subprocess.Popen | None = None
        self.sent = False
        """A shared application was sent this run's query."""

    @property
    def pid(self) -> int | None:
        if self.application is not None:
            return self.application.pid
        return self.proc.pid if self.proc else None

    @property
    def ready_text(self) -> str | None:
        """What the running job's ready file holds (Spark: its application id)."""
        ready = self.dir / rundir.READY
        return (ready.read_text().strip() or None) if ready.exists() else None

    def start(
        self,
        ready_timeout_s: float,
        health: Callable[[], None],
        update: Update,
        resume: bool = False,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        """Start the job and wait until its query runs; ``health()`` raises to give up.

        ``resume``: start it again after :meth:`kill`, from the run's checkpoint.
        ``on_started`` is called once, as soon as the query has started (it reads from
        then on; the floor: when it is ready), which can be long before it is ready:
        a first batch over a backlog completes only when the backlog is processed.
        """
        config_file = self.dir / rundir.PIPELINE
        if resume:
            (self.dir / rundir.READY).unlink(missing_ok=True)
        else:
            write_pipeline_config(self.dir, self.config)
        if self.application is not None:
            if resume:
                raise EngineError("a query in a shared application cannot be restarted")
            self.application.send({"start": str(config_file)})
            self.sent = True
        else:
            self._spawn(config_file, resume)
        ready = self.dir / rundir.READY
        began = time.monotonic()
        while not ready.exists():
            self.check()
            health()
            if on_started is not None and self._query_started():
                on_started()
                on_started = None
            waited = time.monotonic() - began
            if waited > ready_timeout_s:
                raise EngineError(
                    f"{self.engine.whose} job was not running after {ready_timeout_s:g} s; "
                    f"see {self.log_file()}"
                )
            update(waited, "")
            time.sleep(POLL_S)
        if on_started is not None:  # the floor writes no query events
            on_started()

    @property
    def engine(self) -> Engine:
        """The engine that runs the job."""
        return chosen(self.config.engine, self.config.stage)

    def _spawn(self, config_file: Path, resume: bool) -> None:
        module = self.engine.job
        cmd = [sys.executable, "-m", module, "--config", str(config_file),
               "--run-dir", str(self.dir), "--parent-watch",
               *(["--resume"] if resume else [])]  # fmt: skip
        with open(self.dir / rundir.PIPELINE_LOG, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches the runner; it stops the job in order
            )  # fmt: skip

    def _query_started(self) -> bool:
        progress = self.dir / rundir.PROGRESS
        return progress.exists() and '"event": "started"' in progress.read_text()

    def check(self) -> None:
        """EngineError when the job has exited (in a shared application: when its query
        failed or the application exited)."""
        if self.application is not None:
            self.application.check()
            failed = self.dir / rundir.FAILED
            if failed.exists():
                raise EngineError(
                    f"{self.engine.whose} query failed: {failed.read_text().strip()} "
                    f"(log: {self.log_file()})"
                )
            return
        if self.proc is not None and self.proc.poll() is not None:
            raise EngineError(
                f"{self.engine.whose} job exited with code {self.proc.returncode}: "
                f"{last_error(self.dir / rundir.PIPELINE_LOG)}"
            )

    def drain(self, timeout_s: float, health: Callable[[], None]) -> bool:
        """Wait until the job has processed everything: two empty batches in a row, or
        the pause its engine asks for in a mode whose progress does not tell."""
        pause_s = self.engine.drain_pause_s.get(self.config.trigger)
        if pause_s is not None:
            time.sleep(pause_s)
            return True
        since_ms = int(time.time() * 1000)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check()
            health()
            if drained(self.dir / rundir.PROGRESS, since_ms):
                return True
            time.sleep(POLL_S / 5)
        return False

    def kill(self) -> None:
        """SIGKILL the job's whole process group (driver, JVM, Python workers): a crash."""
        if self.application is not None:
            raise EngineError("a query in a shared application cannot be killed alone")
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout_s: float) -> None:
        """SIGTERM, then SIGKILL to the job's whole process group after ``timeout_s``; in
        a shared application: stop the query, and the application if it does not stop
        within ``timeout_s``."""
        if self.application is not None:
            self._stop_query(self.application, timeout_s)
            return
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def _stop_query(self, application: Application, timeout_s: float) -> None:
        """Stop the query; one that does not stop takes its application with it (the
        next runs get jobs of their own instead of sharing the machine with it)."""
        if not self.sent or (self.dir / rundir.FAILED).exists() or not application.running:
            return
        try:
            application.send({"stop": str(self.dir)})
        except EngineError:
            return  # the application is gone, and the query with it
        deadline = time.monotonic() + max(timeout_s, QUERY_STOP_S)
        while not (self.dir / rundir.STOPPED).exists() and application.running:
            if time.monotonic() > deadline:
                application.close(0)
                return
            time.sleep(POLL_S / 5)

    def log_file(self) -> Path:
        """Where the job's output goes: its own log, or its shared application's."""
        if self.application is not None:
            return self.application.dir / rundir.APPLICATION_LOG
        return self.dir / rundir.PIPELINE_LOG


def progress_events(progress: Path) -> Iterator[dict[str, Any]]:
    """The job's listener events (``engine_progress.jsonl``), none when it has written
    none; a line cut short by a killed job is passed over."""
    if not progress.exists():
        return
    for line in progress.read_text().splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def drained(progress: Path, since_ms: int) -> bool:
    """Two progress events after ``since_ms`` in a row with no input rows, or an idle event."""
    empty = 0
    for event in progress_events(progress):
        if event.get("time_ms", 0) < since_ms:
            continue
        if event.get("event") == "idle":
            return True
        if event.get("event") == "progress":
            empty = empty + 1 if event.get("numInputRows", 0) == 0 else 0
            if empty >= 2:
                return True
    return False
