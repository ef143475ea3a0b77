"""The Spark job's process: its configuration hand-off, start, readiness, health, drain, stop.

The bench writes the job's :class:`PipelineConfig` to ``pipeline.json`` in the
run directory and starts ``python -m pipelines.job --config …`` (the floor:
``pipelines.floor``) in its own process group (so Ctrl-C reaches the runner,
which stops the job in order).
The job's standard input is a pipe from the runner: when the runner dies, even
by SIGKILL, the pipe closes and the job stops itself (``--parent-watch``).
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

from ground import rundir
from ground.config import as_dict
from ground.errors import ConfigError, SparkError
from ground.stages import stage
from pipelines.config import PipelineConfig

POLL_S = 0.5
REAL_TIME_DRAIN_S = 5.0
"""Real-time mode reports progress only at its checkpoint interval; its latency is
milliseconds, so a short pause lets the last records through."""


def write_pipeline_config(run_dir: Path, config: PipelineConfig) -> Path:
    """Write ``run_dir/pipeline.json``, the job's configuration; refuses to overwrite one."""
    path = run_dir / rundir.PIPELINE
    if path.exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    doc = {"pipeline": as_dict(config), "spark_conf": config.spark_conf_effective()}
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


class Engine:
    """The job of one run (the Spark pipeline, or the floor), as a child process."""

    def __init__(self, run_dir: Path, config: PipelineConfig):
        self.dir, self.config = run_dir, config
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def app_id(self) -> str | None:
        """The Spark application id of the running job (its ready file holds it)."""
        ready = self.dir / rundir.READY
        return (ready.read_text().strip() or None) if ready.exists() else None

    def start(
        self,
        ready_timeout_s: float,
        health: Callable[[], None],
        update,
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
        module = "pipelines.job" if stage(self.config.stage).spark else "pipelines.floor"
        cmd = [sys.executable, "-m", module, "--config", str(config_file),
               "--run-dir", str(self.dir), "--parent-watch",
               *(["--resume"] if resume else [])]  # fmt: skip
        with open(self.dir / rundir.PIPELINE_LOG, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches the runner; it stops the job in order
            )  # fmt: skip
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
                raise SparkError(
                    f"the Spark job was not running after {ready_timeout_s:g} s; "
                    f"see {self.dir / rundir.PIPELINE_LOG}"
                )
            update(waited, "")
            time.sleep(POLL_S)
        if on_started is not None:  # the floor writes no query events
            on_started()

    def _query_started(self) -> bool:
        progress = self.dir / rundir.PROGRESS
        return progress.exists() and '"event": "started"' in progress.read_text()

    def check(self) -> None:
        """SparkError when the job has exited."""
        if self.proc is not None and self.proc.poll() is not None:
            raise SparkError(
                f"the Spark job exited with code {self.proc.returncode}: "
                f"{_last_error(self.dir / rundir.PIPELINE_LOG)}"
            )

    def drain(self, timeout_s: float, health: Callable[[], None]) -> bool:
        """Wait until the job has processed everything: two empty batches in a row."""
        if self.config.trigger == "real-time":
            time.sleep(REAL_TIME_DRAIN_S)
            return True
        since_ms = int(time.time() * 1000)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.check()
            health()
            if drained(self.dir / rundir.PROGRESS, since_ms):
                return True
            time.sleep(POLL_S)
        return False

    def kill(self) -> None:
        """SIGKILL the job's whole process group (driver, JVM, Python workers): a crash."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout_s: float) -> None:
        """SIGTERM, then SIGKILL to the job's whole process group after ``timeout_s``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


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


def _last_error(log_file: Path) -> str:
    if not log_file.exists():
        return "no log"
    lines = [ln for ln in log_file.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1][:500] + f" (log: {log_file})"
