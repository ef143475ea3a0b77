"""The command engine's job process: your command, watched from outside.

It runs ``[engine.command] job`` with ``/bin/sh -c`` in the directory stagebench was
started in (so ``python my_job.py`` finds the file as the user typed it), with the run's
Kafka, topics and files in :data:`ENVIRONMENT`'s variables, in this process's process
group (so a runner that kills this job kills yours with it). This
process is its children's subreaper: a process of your job whose parent exited, or
that left the group (``setsid``), stays its descendant, and is stopped with the rest. It sees
nothing inside your job, so it tells the runner what it can see from Kafka:

- **ready**: at once (``ready = "first-output"``; then your job must write its first
  output within ``first_output_s`` of the first input, or it has failed), or once your
  job creates the file ``STAGEBENCH_READY_FILE`` names (``ready = "file"``);
- **progress**: every 200 ms, how many records the output topic grew by; **idle** once
  it grew by nothing for ``quiet_ms``, which the runner reads as drained (while the
  broker cannot be reached, as in a broker fault, nothing);
- **stop**: SIGTERM to every process of your job, SIGKILL to those left after
  ``grace_s``; also when your job exits by itself, which fails the run (and when the
  runner is gone: ``--parent-watch``).
"""

import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import TextIO

import psutil
from confluent_kafka import Consumer, KafkaException, TopicPartition

from engines import process
from engines.command.settings import CommandSettings
from engines.config import IDLE_PROGRESS_MS, PipelineConfig
from ground import rundir
from ground.errors import EngineError
from ground.kafka import client

log = logging.getLogger(__name__)

BOOTSTRAP = "STAGEBENCH_BOOTSTRAP"
INPUT_TOPICS = "STAGEBENCH_INPUT_TOPICS"
OUTPUT_TOPIC = "STAGEBENCH_OUTPUT_TOPIC"
SCRATCH_DIR = "STAGEBENCH_SCRATCH_DIR"
READY_FILE = "STAGEBENCH_READY_FILE"
RUN_ID = "STAGEBENCH_RUN_ID"
STAGE = "STAGEBENCH_STAGE"
ENVIRONMENT = (BOOTSTRAP, INPUT_TOPICS, OUTPUT_TOPIC, SCRATCH_DIR, READY_FILE, RUN_ID, STAGE)
"""The variables a job is given (docs/own-pipeline.md): the broker's bootstrap address, the
input topics (comma-separated: speed, flow), the output topic, a directory of its own
for checkpoints and state, the file that says it is ready, the run's id and the stage
it is measured as (``job``, or the stage of the ladder it implements)."""
SCRATCH = "scratch"
"""The job's directory under the run directory."""
POLL_S = IDLE_PROGRESS_MS / 1000


def environment(config: PipelineConfig, scratch: Path) -> dict[str, str]:
    """The variables of :data:`ENVIRONMENT` for ``config``'s run."""
    return {
        BOOTSTRAP: config.bootstrap,
        INPUT_TOPICS: f"{config.speed_topic},{config.flow_topic}",
        OUTPUT_TOPIC: config.output_topic,
        SCRATCH_DIR: str(scratch),
        READY_FILE: str(scratch / "ready"),
        RUN_ID: config.run_id,
        STAGE: config.stage,
    }


class Topics:
    """How many records the input and the output topics hold (their end offsets)."""

    def __init__(self, bootstrap: str, inputs: list[str], output: str) -> None:
        self.consumer = Consumer(
            client.settings(
                {
                    "bootstrap.servers": bootstrap,
                    "group.id": f"stagebench-watch-{uuid.uuid4().hex[:8]}",
                    "enable.auto.commit": False,
                    "log_level": 0,
                }
            )
        )
        self.inputs, self.output = inputs, output
        self.partitions: dict[str, list[int]] = {}

    def records(self, topic: str) -> int:
        if topic not in self.partitions:
            found = self.consumer.list_topics(topic, timeout=2).topics[topic].partitions
            self.partitions[topic] = sorted(found)
        return sum(
            self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=2)[1]
            for p in self.partitions[topic]
        )

    def input_records(self) -> int:
        return sum(self.records(topic) for topic in self.inputs)

    def close(self) -> None:
        self.consumer.close()


def run(
    config: PipelineConfig,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
    resume: bool = False,
) -> int:
    """Run the command until ``stop`` (or ``max_seconds``); 1 when it failed."""
    settings = config.settings
    assert isinstance(settings, CommandSettings)
    scratch = run_dir / SCRATCH
    scratch.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **environment(config, scratch)}
    log.info("starting your job: %s", settings.job)
    _become_subreaper()
    proc = subprocess.Popen(["/bin/sh", "-c", settings.job], env=env, stdin=subprocess.DEVNULL)
    topics = Topics(config.bootstrap, [config.speed_topic, config.flow_topic], config.output_topic)
    try:
        _watch(proc, settings, topics, run_dir, scratch, max_seconds, stop)
    except EngineError as err:
        print(f"ERROR: {err}", flush=True)
        return 1
    finally:
        stop_tree(proc, settings.grace_s)
        topics.close()
    return 0


def _watch(
    proc: "subprocess.Popen[bytes]",
    settings: CommandSettings,
    topics: Topics,
    run_dir: Path,
    scratch: Path,
    max_seconds: float | None,
    stop: threading.Event,
) -> None:
    """Report readiness and progress until ``stop``; EngineError when the job failed."""
    ready = settings.ready == "first-output"
    if ready:
        (run_dir / rundir.READY).touch()
    began = time.monotonic()
    outputs: int | None = None
    last_growth: float | None = None
    first_input: float | None = None
    with open(run_dir / rundir.PROGRESS, "a") as progress:
        while not stop.wait(POLL_S):
            if proc.poll() is not None:
                raise EngineError(
                    f"your job exited with code {proc.returncode} (its output is above, in "
                    f"{rundir.PIPELINE_LOG})"
                )
            now = time.monotonic()
            if max_seconds is not None and now - began > max_seconds:
                return
            if not ready and (scratch / "ready").exists():
                (run_dir / rundir.READY).touch()
                ready = True
            try:
                count = topics.records(topics.output)
                if first_input is None and topics.input_records():
                    first_input = now
            except KafkaException as err:  # a broker fault: the run's health check judges it
                log.info("the topics cannot be read now: %s", err)
                continue
            waited = 0.0 if first_input is None else now - first_input
            if count == 0 and waited > settings.first_output_s:
                raise EngineError(
                    f"your job wrote nothing to {topics.output} within "
                    f"{settings.first_output_s:g} s of the first input (first_output_s): "
                    "does it read STAGEBENCH_INPUT_TOPICS and write STAGEBENCH_OUTPUT_TOPIC?"
                )
            if outputs is None or count > outputs:
                rows = count - (outputs or 0)
                last_growth, outputs = now, count
                _event(progress, {"event": "progress", "numInputRows": rows})
            elif last_growth is not None and (now - last_growth) * 1000 >= settings.quiet_ms:
                _event(progress, {"event": "idle"})


def _event(progress: TextIO, event: dict[str, object]) -> None:
    progress.write(json.dumps({**event, "time_ms": int(time.time() * 1000)}) + "\n")
    progress.flush()


def _become_subreaper() -> None:
    """Make this process the subreaper of its descendants (Linux): an orphaned process of
    the job is handed to it rather than to init, so :func:`stop_tree` still finds it."""
    with contextlib.suppress(OSError, AttributeError):
        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            log.warning("cannot become the job's subreaper: errno %d", ctypes.get_errno())


PR_SET_CHILD_SUBREAPER = 36


def stop_tree(proc: "subprocess.Popen[bytes]", grace_s: float) -> None:
    """SIGTERM to the job's shell and every other process under this one (the job's
    orphans among them), SIGKILL to those left after ``grace_s``."""
    tree = psutil.Process().children(recursive=True)
    for member in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace_s)
    for member in alive:
        log.warning("job process %d did not stop within %g s: killing it", member.pid, grace_s)
        with contextlib.suppress(psutil.NoSuchProcess):
            member.kill()
    psutil.wait_procs(alive, timeout=5)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(1)


def main(argv: list[str] | None = None) -> int:
    return process.main(run, "python -m engines.command.job", "your job, as a command", argv)


if __name__ == "__main__":
    raise SystemExit(main())
