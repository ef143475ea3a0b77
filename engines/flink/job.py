"""The Flink job process: ``python -m engines.flink.job --config RUN_DIR/pipeline.json``.

It runs in stagebench's environment: it writes the stage's Flink SQL
(:mod:`engines.flink.statements`) to ``RUN_DIR/flink_statements.json``, each table option
that can carry a secret as ``<redacted>`` (:func:`ground.kafka.client.redacted`), starts
the runner (:mod:`engines.flink.runner`) with the Flink runtime's interpreter
(:mod:`engines.flink.runtime`) in its own process group on the statements as they are,
from a file of mode 0600 in a private temporary directory (the runner deletes it once read),
and then, every
:data:`PROGRESS_EVERY_S`, reads the Flink job's status and the offsets its Kafka
source has committed for its consumer group (the source commits what it has read every
100 ms): ``pipeline.ready`` is touched once the job runs and its source has committed
an offset for every input partition, and each progress event counts the records read
since the last. An event with no rows is written only when nothing is left to read
(the committed offsets are the partitions' ends), so two of them in a row mean that the
job has drained. On stop it sends the runner SIGTERM (it cancels the Flink job), then
SIGKILL, and kills whatever of its processes is left. ``--resume`` (after an
engine-restart fault) starts the Flink job from the newest complete checkpoint.
"""

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil
from confluent_kafka import Consumer, KafkaException, TopicPartition

from engines import process
from engines.config import IDLE_PROGRESS_MS, PipelineConfig
from engines.flink import ENGINE, runtime
from engines.flink.settings import FlinkSettings, flink_settings
from engines.flink.statements import Statements, statements
from ground import files, rundir
from ground.errors import ConfigError, EngineError
from ground.kafka import client

log = logging.getLogger(__name__)

STATEMENTS = "flink_statements.json"
STATUS = "flink_status.json"
FLINK_LOG = "flink_log"
"""The directory of Flink's log files, in the run directory."""
PROGRESS_EVERY_S = IDLE_PROGRESS_MS / 1000
ENDED = ("CANCELED", "FAILED", "FINISHED")
"""A Flink job's final states."""
STOP_S = 20.0
"""How long the runner may take to cancel the Flink job and exit before SIGKILL."""


def group_id(config: PipelineConfig) -> str:
    """The Kafka source's consumer group: one per run."""
    return f"stagebench-flink-{config.run_id}"


def latest_checkpoint(checkpoint_dir: Path) -> Path | None:
    """The newest complete checkpoint Flink wrote under ``checkpoint_dir``
    (``<job id>/chk-<n>/_metadata``); None when there is none."""
    done = [m.parent for m in checkpoint_dir.glob("*/chk-*/_metadata")]
    return max(done, key=lambda d: (d.stat().st_mtime, int(d.name[4:])), default=None)


def job_statements(
    config: PipelineConfig, jars: list[Path], restore: Path | None = None, redact: bool = False
) -> Statements:
    """The statements of ``config``'s stage with its settings and the connector ``jars``;
    ``restore``: the checkpoint the job starts from; ``redact``: each Kafka option that can
    carry a secret ``<redacted>``, as the run directory keeps them."""
    settings = flink_settings(config)
    conf = settings.table_conf(config)
    conf["pipeline.jars"] = ";".join(jar.as_uri() for jar in jars)
    if restore is not None:
        conf["execution.state-recovery.path"] = restore.as_uri()
    source, sink = settings.source_kafka(), settings.sink_kafka()
    if redact:
        source, sink = client.redacted(source), client.redacted(sink)
    return statements(config, group_id(config), source, sink, conf)


class Offsets:
    """The committed offsets of the job's consumer group and the input partitions' ends."""

    def __init__(self, config: PipelineConfig) -> None:
        self.consumer = Consumer(
            client.settings({"bootstrap.servers": config.bootstrap, "group.id": group_id(config),
                             "enable.auto.commit": False, "log_level": 0})
        )  # fmt: skip
        topics = (config.speed_topic, config.flow_topic)
        metadata = self.consumer.list_topics(timeout=10)
        missing = [t for t in topics if t not in metadata.topics]
        if missing:
            raise ConfigError(f"input topics missing: {', '.join(missing)}")
        self.partitions = [
            TopicPartition(t, p) for t in topics for p in sorted(metadata.topics[t].partitions)
        ]

    def read(self) -> tuple[int | None, int]:
        """(the committed offsets' sum, None until every partition has one; the records
        after them)."""
        committed = self.consumer.committed(self.partitions, timeout=5)
        if any(tp.offset < 0 for tp in committed):
            return None, 0
        ends = [self.consumer.get_watermark_offsets(tp, timeout=5)[1] for tp in self.partitions]
        done = sum(tp.offset for tp in committed)
        return done, sum(ends) - done

    def close(self) -> None:
        self.consumer.close()


def _event(path: Path, event: str, **fields: object) -> None:
    line = json.dumps({"event": event, "time_ms": int(time.time() * 1000), **fields})
    with path.open("a") as out:
        out.write(line + "\n")


def _status_record(run_dir: Path) -> dict[str, str] | None:
    """The runner's last status record (``job_id``, ``status``), None before its first."""
    try:
        record: dict[str, str] = json.loads((run_dir / STATUS).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return record if {"job_id", "status"} <= record.keys() else None


def _status(run_dir: Path) -> str | None:
    record = _status_record(run_dir)
    return None if record is None else record["status"]


def _start_runner(run_dir: Path, plan: Path) -> subprocess.Popen:
    interpreter = runtime.python()
    cmd = [str(interpreter), str(runtime.RUNNER), str(plan), str(run_dir / STATUS)]
    # Flink's own log goes to the run directory, not into the runtime's environment
    env = {**os.environ, "FLINK_LOG_DIR": str(run_dir / FLINK_LOG)}
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, env=env)


def stop_runner(runner: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after :data:`STOP_S`; then whatever it started that is left."""
    try:
        children = psutil.Process(runner.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    if runner.poll() is None:
        runner.send_signal(signal.SIGTERM)
        try:
            runner.wait(STOP_S)
        except subprocess.TimeoutExpired:
            runner.kill()
            runner.wait()
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    psutil.wait_procs(children, timeout=10)


def run(
    config: PipelineConfig,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
    resume: bool = False,
) -> int:
    """Run the stage on Flink until ``stop`` or ``max_seconds``; EngineError if it fails."""
    ENGINE.check(config.stage, config.impl, config.trigger)
    run_dir.mkdir(parents=True, exist_ok=True)
    restore = None
    if resume:
        restore = latest_checkpoint(Path(config.checkpoint_dir))
        if restore is None:
            raise EngineError(f"no complete checkpoint to resume from in {config.checkpoint_dir}")
        log.info("resuming from %s", restore)
    elif (run_dir / rundir.PROGRESS).exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    offsets = Offsets(config)
    jars = runtime.connector_jars()
    shown = job_statements(config, jars, restore, redact=True)
    files.write(run_dir / STATEMENTS, json.dumps(shown.as_dict(), indent=2) + "\n")
    with tempfile.TemporaryDirectory(prefix="stagebench-flink-") as private:
        plan = Path(private) / STATEMENTS
        files.write(plan, json.dumps(job_statements(config, jars, restore).as_dict()), private=True)
        runner = _start_runner(run_dir, plan)
        try:
            _follow(runner, offsets, run_dir, max_seconds, stop)
        finally:
            stop_runner(runner)
            offsets.close()
            cancel_left_on_cluster(flink_settings(config), run_dir)
    return 0


def cancel_left_on_cluster(settings: FlinkSettings, run_dir: Path) -> None:
    """Cancel the run's Flink job on the session cluster when the runner did not (it was
    killed first): a job left there would read and write on, holding its task slots."""
    status = _status_record(run_dir)
    if not settings.cluster or not status or status.get("status") in ENDED:
        return
    host, port = settings.rest_address()
    url = f"http://{host}:{port}/jobs/{status['job_id']}?mode=cancel"
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="PATCH"), timeout=10).close()
    except OSError as error:
        log.warning("could not cancel Flink job %s on %s: %s", status["job_id"], settings.cluster,
                    error)  # fmt: skip


def _follow(
    runner: subprocess.Popen,
    offsets: Offsets,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
) -> None:
    """Ready file and progress events until ``stop``; EngineError when the runner exits."""
    progress, ready = run_dir / rundir.PROGRESS, run_dir / rundir.READY
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    started, last = False, 0
    with contextlib.suppress(KafkaException):  # a resumed job's group has offsets already
        last = offsets.read()[0] or 0
    while not stop.wait(PROGRESS_EVERY_S):
        if runner.poll() is not None:
            raise EngineError(f"the Flink runner exited with code {runner.returncode}")
        if not started and _status(run_dir) == "RUNNING":
            _event(progress, "started")
            started = True
        try:
            done, left = offsets.read()
        except KafkaException as err:  # the group's coordinator is still being chosen
            log.debug("could not read the committed offsets: %s", err)
            continue
        if done is None:
            continue
        if not ready.exists() and started:
            ready.touch()
            log.info("the Flink job is running")
        rows = done - last
        last = done
        if rows or not left:
            _event(progress, "progress", numInputRows=rows, backlog=left)
        if deadline is not None and time.monotonic() >= deadline:
            break


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.flink.job --config RUN_DIR/pipeline.json``."""
    return process.main(
        run, "engines.flink.job", "Run the Flink pipeline a pipeline.json describes.", argv
    )


if __name__ == "__main__":
    sys.exit(main())
