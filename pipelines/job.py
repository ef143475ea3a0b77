"""The pipeline's entry point: build the stage ladder up to a stage and run it.

``stagebench pipeline ...`` and ``spark-submit pipelines/job.py ...`` take the same
arguments (see :mod:`pipelines.cli`; ``--master`` is one of them and wins over
spark-submit's). Under spark-submit the JVM runs before the session is built, so
the Kafka connector must come on the command line: ``--jars`` with the jars of
``stagebench.ivy.resolve([stagebench.spark.kafka_connector()])`` joined by commas
(checked), or ``--packages`` where Ivy can reach Maven Central.

A run directory receives ``pipeline.json`` (the effective configuration),
``engine_progress.jsonl`` (listener events) and ``pipeline.ready`` once the query
has started and its source is initialised; SIGTERM and SIGINT stop it gracefully.
"""

import json
import logging
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pipelines import custom, stages
from pipelines.config import PipelineConfig
from stagebench.config import as_dict
from stagebench.errors import ConfigError, SparkError

log = logging.getLogger(__name__)

READY_FILE = "pipeline.ready"
PROGRESS_FILE = "engine_progress.jsonl"
CONFIG_FILE = "pipeline.json"
POLL_S = 0.2


def build(raw: Any, config: PipelineConfig) -> Any:
    """The ladder ``ingest -> ... -> config.stage`` over the raw input stream."""
    ladder = stages.ingest(raw)
    if config.stage == "ingest":
        return ladder
    ladder = stages.parse(ladder)
    if config.stage == "parse":
        return ladder
    ladder = stages.join(ladder, config.watermark_delay_ms, config.join_range_ms)
    if config.stage == "join":
        return ladder
    windows = custom if config.impl == "custom" else stages
    ladder = windows.tumbling(ladder)
    if config.stage == "tumbling":
        return ladder
    return windows.sliding(
        ladder,
        config.window_length_ms,
        config.window_slide_ms,
        config.lookback_short_ms,
        config.lookback_long_ms,
    )


def start(spark: Any, config: PipelineConfig) -> Any:
    """Start the streaming query writing ``config.stage``'s output to the output topic."""
    from pyspark.errors import PySparkException

    from pipelines.sink import kafka_writer
    from pipelines.source import read_inputs

    try:
        return kafka_writer(build(read_inputs(spark, config), config), config).start()
    except PySparkException as err:
        raise SparkError(f"could not start the {config.stage} query: {_first_line(err)}") from err


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def _ready(query: Any, real_time: bool) -> bool:
    """Micro-batches: the first batch completed or the source waits for data.

    Real-time mode runs one long batch (until its checkpoint interval), so there it is
    ready once that batch is running.
    """
    status = query.status
    if real_time:
        return bool(status.get("isTriggerActive"))
    return query.lastProgress is not None or status.get("message") == "Waiting for data to arrive"


def _local_cores(master: str) -> int | None:
    """Task slots of a local master; None for a cluster (not known here)."""
    if master == "local":
        return 1
    match = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", master)
    if match is None:
        return None
    return os.cpu_count() or 1 if match[1] == "*" else int(match[1])


def check_real_time_slots(config: PipelineConfig) -> None:
    """Real-time mode keeps one task per source partition running for the whole batch.

    With fewer task slots the other partitions are never read, silently; refuse that
    for local masters, where the slots are known.
    """
    cores = _local_cores(config.master)
    if config.trigger != "real-time" or cores is None:
        return
    from stagebench.topics import admin_client

    metadata = admin_client(config.bootstrap).list_topics(timeout=10)
    topics = (config.speed_topic, config.flow_topic)
    partitions = sum(len(metadata.topics[t].partitions) for t in topics if t in metadata.topics)
    if cores < partitions:
        raise ConfigError(
            f"real-time mode needs a task slot per input partition: {partitions} partitions, "
            f"but master {config.master} has {cores}; use e.g. --master local[{partitions}]"
        )


def run(config: PipelineConfig, run_dir: Path, max_seconds: float | None = None) -> int:
    """Run the pipeline until SIGTERM/SIGINT or ``max_seconds``; SparkError if it fails."""
    from pyspark.errors import StreamingQueryException

    from pipelines.progress import ProgressWriter
    from stagebench.spark import build_session

    run_dir.mkdir(parents=True, exist_ok=True)
    if (run_dir / CONFIG_FILE).exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    checkpoint = Path(config.checkpoint_dir)
    if checkpoint.exists() and any(checkpoint.iterdir()):
        raise ConfigError(f"checkpoint directory {checkpoint} is not empty; use a fresh one")
    check_real_time_slots(config)
    conf = config.spark_conf_effective()
    (run_dir / CONFIG_FILE).write_text(
        json.dumps({"pipeline": as_dict(config), "spark_conf": conf}, indent=2) + "\n"
    )

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())

    spark = build_session(f"stagebench-{config.stage}-{config.impl}", config.master, conf)
    spark.streams.addListener(ProgressWriter(run_dir / PROGRESS_FILE))
    query = None
    try:
        query = start(spark, config)
        log.info("query %s started: stage %s, impl %s", query.id, config.stage, config.impl)
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        ready = run_dir / READY_FILE
        while not stop.is_set():
            if query.awaitTermination(POLL_S):
                raise SparkError(f"the {config.stage} query stopped by itself")
            if not ready.exists() and _ready(query, config.trigger == "real-time"):
                ready.touch()
            if deadline is not None and time.monotonic() >= deadline:
                break
    except StreamingQueryException as err:
        raise SparkError(f"the {config.stage} query failed: {_first_line(err)}") from err
    finally:
        if query is not None and query.isActive:
            query.stop()
        spark.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``spark-submit pipelines/job.py --stage ... --run-dir ...``."""
    import argparse

    from pipelines import cli
    from stagebench.errors import StagebenchError

    parser = argparse.ArgumentParser(prog="job.py", description=cli.DESCRIPTION)
    cli.add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        return cli.run(args)
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
