"""The Kafka Streams job process: ``python -m engines.kafka_streams.job --config
RUN_DIR/pipeline.json --run-dir RUN_DIR [--parent-watch] [--resume]``.

It resolves the jars and compiles the Java job if needed (:mod:`engines.kafka_streams.build`),
writes the JVM's configuration (``kafka_streams.json``: the stage, its parameters, the
input contract's tables, the Kafka Streams properties, each that can carry a secret as
``<redacted>``: :func:`ground.kafka.client.redacted`) into the run directory and runs
``java … stagebench.kstreams.Main`` as its child, in this process's group, so a SIGKILL
of the group ends both; the JVM takes the secret values from its environment
(:data:`SECRETS`), never from a file or its command line. The JVM writes the ready file,
the progress events and its effective configuration (``kafka_streams_effective.json``)
itself, and stops when its standard input closes: when this process stops it, or dies. A
stop closes that pipe, waits for Kafka Streams to close, then sends SIGTERM and at last
SIGKILL. With
``instances`` > 1 it runs that many JVMs of the one application, each with files of its
own (:func:`instance_file`), and merges their readiness and progress (:class:`Instances`);
one of them killed (the instance-loss fault) leaves its tasks to the others.
"""

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engines import process
from engines.config import IDLE_PROGRESS_MS, PipelineConfig
from engines.kafka_streams import ENGINE, build
from engines.kafka_streams.settings import KafkaStreamsSettings, kafka_streams_settings
from ground import contract, files, rundir
from ground.errors import ConfigError, EngineError
from ground.jvm.java import java_executable
from ground.kafka import client
from ground.malformed import MAX_INPUT_BYTES, RANGES

log = logging.getLogger(__name__)

CONFIG_FILE = "kafka_streams.json"
EFFECTIVE_FILE = "kafka_streams_effective.json"
"""The Kafka Streams and producer properties as the JVM's clients see them (a value that
holds a secret as ``<redacted>``), and the topology."""
SECRETS = "STAGEBENCH_KAFKA_SECRETS"
"""The JVM's variable of the properties written ``<redacted>`` in its configuration: a
JSON object of their names and values."""
POLL_S = 0.2
CLOSE_S = 40.0
"""How long a stopping JVM may take: Kafka Streams closes within 30 s."""
KILL_S = 10.0


def instance_file(name: str, instance: int, instances: int) -> str:
    """The run directory's file ``name`` of one JVM: itself with one instance, else
    ``instance-<i>.<name>`` (the job merges those)."""
    return name if instances == 1 else f"instance-{instance}.{name}"


def jvm_config(
    config: PipelineConfig, settings: KafkaStreamsSettings, run_dir: Path, instance: int = 0
) -> dict:
    """What the ``instance``-th JVM reads: the stage, its parameters, its files, the
    contract, its properties (a secret's value ``<redacted>``: :func:`secrets`)."""
    n = settings.instances
    return {
        "stage": config.stage,
        "impl": config.impl,
        "state_store": settings.state_store,
        "run_id": config.run_id,
        "speed_topic": config.speed_topic,
        "flow_topic": config.flow_topic,
        "output_topic": config.output_topic,
        "watermark_delay_ms": config.watermark_delay_ms,
        "join_range_ms": config.join_range_ms,
        "join_grace_ms": settings.join_grace_ms,
        "window_length_ms": config.window_length_ms,
        "window_slide_ms": config.window_slide_ms,
        "lookback_short_ms": config.lookback_short_ms,
        "lookback_long_ms": config.lookback_long_ms,
        "run_dir": str(run_dir.resolve()),
        "ready_file": instance_file(rundir.READY, instance, n),
        "progress_file": instance_file(rundir.PROGRESS, instance, n),
        "effective_file": instance_file(EFFECTIVE_FILE, instance, n),
        "progress_ms": IDLE_PROGRESS_MS,
        # a task holds a topic's inputs back up to max.task.idle.ms while the other's partition
        # is empty (the last inputs of a run): idle only once that is over
        "quiet_ms": settings.max_task_idle_ms + IDLE_PROGRESS_MS,
        "contract": {
            "fields": list(contract.INPUT_FIELDS),
            "types": {name: contract.FIELD_TYPES[name] for name in contract.INPUT_FIELDS},
            "required": list(contract.REQUIRED_FIELDS),
            "kinds": list(contract.KINDS),
            "ranges": {name: list(bounds) for name, bounds in RANGES.items()},
            "max_bytes": MAX_INPUT_BYTES,
        },
        "properties": client.redacted(settings.properties(config, instance)),
    }


def secrets(config: PipelineConfig) -> dict[str, str]:
    """The properties of the job's JVMs that their configuration holds ``<redacted>``,
    with their values (the same for every instance)."""
    given = kafka_streams_settings(config).properties(config)
    shown = client.redacted(given)
    return {key: value for key, value in given.items() if shown[key] != value}


def prepare(config: PipelineConfig, run_dir: Path, resume: bool) -> None:
    """Refuse a used run directory or state directory, unless ``resume``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    state = Path(config.checkpoint_dir)
    if resume:
        return
    if (run_dir / rundir.PROGRESS).exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    if state.exists() and any(state.iterdir()):
        raise ConfigError(f"checkpoint directory {state} is not empty; use a fresh one")


def start_jvms(config: PipelineConfig, run_dir: Path) -> list[subprocess.Popen[Any]]:
    """Compile if needed, write each JVM's configuration, start the JVMs (stdin a pipe)."""
    settings = kafka_streams_settings(config)
    cp = build.job_classpath(settings.state_store)
    log.info(
        "starting Kafka Streams %s: stage %s, %d instance(s)",
        build.version(), config.stage, settings.instances,
    )  # fmt: skip
    env = {**os.environ, SECRETS: json.dumps(secrets(config))}
    jvms = []
    for instance in range(settings.instances):
        path = run_dir / instance_file(CONFIG_FILE, instance, settings.instances)
        doc = jvm_config(config, settings, run_dir, instance)
        files.write(path, json.dumps(doc, indent=2) + "\n")
        command = [java_executable(), "-cp", cp, build.MAIN, str(path)]
        jvms.append(subprocess.Popen(command, stdin=subprocess.PIPE, env=env))
    return jvms


class Instances:
    """Several JVMs as one job: ready once each is, one progress event per interval with
    their inputs summed (a drain needs every instance idle, not one)."""

    def __init__(self, run_dir: Path, instances: int) -> None:
        self.run_dir, self.instances = run_dir, instances
        self.read = [0] * instances
        self.next_s = time.monotonic()

    def poll(self) -> None:
        ready = self.run_dir / rundir.READY
        files = range(self.instances)
        if not ready.exists() and all(
            (self.run_dir / instance_file(rundir.READY, i, self.instances)).exists() for i in files
        ):
            ready.touch()
        if time.monotonic() < self.next_s:
            return
        self.next_s += IDLE_PROGRESS_MS / 1000
        rows = 0
        for i in files:
            path = self.run_dir / instance_file(rundir.PROGRESS, i, self.instances)
            if not path.exists():
                continue
            with path.open("rb") as f:
                f.seek(self.read[i])
                lines = f.read().split(b"\n")[:-1]  # a line being written stays for later
            self.read[i] += sum(len(line) + 1 for line in lines)
            rows += sum(json.loads(line)["numInputRows"] for line in lines)
        event = {"event": "progress", "time_ms": int(time.time() * 1000), "numInputRows": rows}
        with (self.run_dir / rundir.PROGRESS).open("a") as out:
            out.write(json.dumps(event) + "\n")


def stop_jvm(jvm: subprocess.Popen[Any]) -> int:
    """Close the JVM's stdin (it closes Kafka Streams and exits), then SIGTERM, then SIGKILL;
    its exit code."""
    if jvm.stdin is not None:
        jvm.stdin.close()
    for timeout_s, then in ((CLOSE_S, jvm.terminate), (KILL_S, jvm.kill)):
        try:
            return jvm.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("the Kafka Streams JVM did not stop within %.0f s: %s", timeout_s, then)
            then()
    return jvm.wait()


def run(
    config: PipelineConfig,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
    resume: bool = False,
) -> int:
    """Run the stage in a Kafka Streams JVM until ``stop`` or ``max_seconds``; EngineError
    when the JVM exits by itself. ``resume``: continue the run's application (its committed
    offsets, its state from the changelogs), as after an engine restart."""
    ENGINE.check(config.stage, config.impl, config.trigger)
    prepare(config, run_dir, resume)
    instances = kafka_streams_settings(config).instances
    merged = Instances(run_dir, instances) if instances > 1 else None
    for i in range(instances if merged else 0):  # an earlier job's, before a resume
        (run_dir / instance_file(rundir.READY, i, instances)).unlink(missing_ok=True)
    jvms = start_jvms(config, run_dir)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    try:
        while not stop.wait(POLL_S / 4 if merged else POLL_S):
            if merged is not None:
                merged.poll()
            if (ended := next((j for j in jvms if j.poll() is not None), None)) is not None:
                if len(jvms) > 1 and ended.returncode == -signal.SIGKILL:
                    # one instance of several lost (the instance-loss fault): the others
                    # take over its tasks once its session times out
                    log.warning("instance %d was killed: the others take its tasks", ended.pid)
                    jvms.remove(ended)
                    continue
                raise EngineError(
                    f"the Kafka Streams {config.stage} job exited with code {ended.returncode} "
                    "(its ERROR line is in the log above)"
                )
            if deadline is not None and time.monotonic() >= deadline:
                break
    finally:
        for jvm in jvms:  # all at once: each closes in parallel
            if jvm.stdin is not None:
                jvm.stdin.close()
        codes = [stop_jvm(jvm) for jvm in jvms]
    if any(codes):
        raise EngineError(f"the Kafka Streams {config.stage} job stopped with exit codes {codes}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.kafka_streams.job --config RUN_DIR/pipeline.json``."""
    return process.main(
        run, "engines.kafka_streams.job", "Run a stage on Kafka Streams (pipeline.json).", argv
    )


if __name__ == "__main__":
    sys.exit(main())
