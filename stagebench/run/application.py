"""The session a suite's runs or a capacity search's probes share (the engine's
:attr:`~engines.base.Engine.session`, Spark's application): its process, its commands, its
health and its age.

Its process is started like a run's job (its own process group, standard input a pipe
from the bench), and it stops when that pipe closes: when the suite or search ends or
dies, even by SIGKILL.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from engines.config import PipelineConfig
from engines.registry import chosen
from ground import files, rundir
from ground.errors import ConfigError, EngineError
from stagebench.console import Update

POLL_S = 0.5


def session_conf(config: PipelineConfig) -> dict[str, Any] | None:
    """What a shared session must run with to take ``config``'s query (None: it cannot)."""
    return config.settings.session_conf(config) if config.settings is not None else None


class Application:
    """One session process of the engine that runs ``config``'s stage, started with that
    configuration's settings."""

    def __init__(self, app_dir: Path, config: PipelineConfig):
        self.dir = app_dir
        self.conf = session_conf(config)
        engine = chosen(config.engine, config.stage)
        if engine.session is None:
            raise ConfigError(f"the engine of {config.stage} has no session to share")
        self.module = engine.session
        self.install = partial(engine.install or (lambda _: None), config.settings)
        self.proc: subprocess.Popen | None = None
        self.started: float | None = None
        self.warmed_up: dict[str, Any] | None = None
        """What warmed it up (:mod:`stagebench.run.warmup`), once that is done."""
        self.place = config.settings.place if config.settings is not None else None
        """Where it runs ("master local[2]")."""

    def accepts(self, config: PipelineConfig) -> bool:
        """Whether ``config``'s query can run here: the engine's settings make the same
        session (Spark: master and conf; not real-time mode, which needs every task slot
        for itself)."""
        conf = session_conf(config)
        return conf is not None and conf == self.conf

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def age_s(self) -> float:
        """Seconds since the application's session started (0 before)."""
        return 0.0 if self.started is None else time.monotonic() - self.started

    def start(self, timeout_s: float, update: Update) -> None:
        """Start the application and wait until its Spark session runs."""
        self.install()
        self.dir.mkdir(parents=True, exist_ok=True)
        files.write(self.dir / rundir.APPLICATION_CONF, json.dumps(self.conf, indent=2) + "\n")
        cmd = [sys.executable, "-m", self.module, "--app-dir", str(self.dir)]
        with open(self.dir / rundir.APPLICATION_LOG, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches the bench; it stops the application
            )  # fmt: skip
        began = time.monotonic()
        while not (self.dir / rundir.APPLICATION_READY).exists():
            self.check()
            if (waited := time.monotonic() - began) > timeout_s:
                raise EngineError(
                    f"the shared Spark application was not running after {timeout_s:g} s; "
                    f"see {self.dir / rundir.APPLICATION_LOG}"
                )
            update(waited, "")
            time.sleep(POLL_S)
        self.started = time.monotonic()

    def send(self, command: dict[str, str]) -> None:
        """Send one command (``{"start": pipeline.json}``, ``{"stop": run_dir}``)."""
        self.check()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(command) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError as err:
            raise EngineError(f"the shared Spark application is gone: {self._log_tail()}") from err

    def check(self) -> None:
        """EngineError when the application has exited."""
        if self.proc is not None and self.proc.poll() is not None:
            raise EngineError(
                f"the shared Spark application exited with code {self.proc.returncode}: "
                f"{self._log_tail()}"
            )

    def _log_tail(self) -> str:
        return last_error(self.dir / rundir.APPLICATION_LOG)

    def close(self, timeout_s: float) -> None:
        """Close its standard input (it stops its queries and its session), then SIGKILL
        its process group after ``timeout_s``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def last_error(log_file: Path) -> str:
    """The last ERROR line of a job's or an application's log (else its last line)."""
    if not log_file.exists():
        return "no log"
    lines = [ln for ln in log_file.read_text(errors="replace").splitlines() if ln.strip()]
    # "ERROR: …" from the job itself, "<time> ERROR <logger>: …" from its logging
    errors = [ln for ln in lines if ln.startswith("ERROR") or " ERROR " in ln]
    return (errors or lines or ["no output"])[-1][:500] + f" (log: {log_file})"
