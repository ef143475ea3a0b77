"""The pipeline's entry point: build the stage ladder up to a stage and run it.

A run hands the job its configuration as JSON: the bench writes
``RUN_DIR/pipeline.json`` (``{"pipeline": {...PipelineConfig fields}, "spark_conf":
{...}}``) and starts ``python -m engines.spark.job --config RUN_DIR/pipeline.json``;
``spark-submit engines/spark/job.py --config pipeline.json`` runs the same job (the
config's ``master`` wins over spark-submit's). Under spark-submit the JVM runs
before the session is built, so the Kafka connector must come on the command
line: ``--jars`` with the jars of ``engines.spark.session.connector_jars()`` joined by
commas (checked), or ``--packages`` where Ivy can reach Maven Central.

The run directory receives ``engine_progress.jsonl`` (listener events) and
``pipeline.ready`` once the query has started and its source is initialised;
SIGTERM and SIGINT stop it gracefully.
"""

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.errors import PySparkException, StreamingQueryException

from engines import process
from engines.config import PipelineConfig
from engines.spark import ENGINE, custom, transforms
from engines.spark.progress import ProgressWriter
from engines.spark.session import build_session
from engines.spark.settings import REAL_TIME, spark_settings
from engines.spark.sink import kafka_writer
from engines.spark.source import read_inputs
from ground import files, rundir
from ground.errors import ConfigError, EngineError
from ground.kafka.topics import admin_client
from ground.stages import chain

log = logging.getLogger(__name__)

POLL_S = 0.2


def _transforms(config: PipelineConfig) -> dict[str, Callable[[Any], Any]]:
    """Each stage's transform with this configuration, by stage name."""
    windows = custom if config.impl == "custom" else transforms
    return {
        "ingest": transforms.ingest,
        "parse": transforms.parse,
        "join": lambda df: transforms.join(df, config.watermark_delay_ms, config.join_range_ms),
        "tumbling": windows.tumbling,
        "tumbling-union": lambda df: transforms.tumbling_union(df, config.watermark_delay_ms),
        "sliding": lambda df: windows.sliding(
            df,
            config.window_length_ms,
            config.window_slide_ms,
            config.lookback_short_ms,
            config.lookback_long_ms,
        ),
    }


def build(raw: Any, config: PipelineConfig) -> Any:
    """The stages ``ingest -> ... -> config.stage`` (:func:`ground.stages.chain`) over
    the raw input stream."""
    transforms = _transforms(config)
    ENGINE.check(config.stage, config.impl, config.trigger)
    ladder = raw
    for step in chain(config.stage):
        if ENGINE.runs(step.name):
            ladder = transforms[step.name](ladder)
    return ladder


def start(spark: Any, config: PipelineConfig) -> Any:
    """Start the streaming query writing ``config.stage``'s output to the output topic."""
    try:
        return kafka_writer(build(read_inputs(spark, config), config), config).start()
    except PySparkException as err:
        raise EngineError(f"could not start the {config.stage} query: {first_line(err)}") from err


def first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def ready(query: Any, real_time: bool) -> bool:
    """Micro-batches: the first batch completed or the source waits for data.

    Real-time mode runs one long batch (until its checkpoint interval), so there it is
    ready once that batch is running.
    """
    status = query.status
    if real_time:
        return bool(status.get("isTriggerActive"))
    return query.lastProgress is not None or status.get("message") == "Waiting for data to arrive"


def check_real_time_slots(config: PipelineConfig) -> None:
    """Refuse real-time mode with fewer task slots than its plan has tasks
    (:meth:`SparkSettings.check_real_time_slots`), counting the input topics' partitions."""
    settings = spark_settings(config)
    if config.trigger != REAL_TIME or settings.local_cores() is None:
        return
    metadata = admin_client(config.bootstrap).list_topics(timeout=10)
    topics = (config.speed_topic, config.flow_topic)
    settings.check_real_time_slots(
        config, sum(len(metadata.topics[t].partitions) for t in topics if t in metadata.topics)
    )


def prepare(config: PipelineConfig, run_dir: Path, resume: bool = False) -> None:
    """Refuse a used run directory or checkpoint (unless ``resume``) and real-time mode
    with too few task slots, before a query starts."""
    run_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = Path(config.checkpoint_dir)
    if not resume and (run_dir / rundir.PROGRESS).exists():
        raise ConfigError(f"{run_dir} already holds a pipeline run; use a fresh run directory")
    if not resume and checkpoint.exists() and any(checkpoint.iterdir()):
        raise ConfigError(f"checkpoint directory {checkpoint} is not empty; use a fresh one")
    check_real_time_slots(config)


def plain_local_files(spark: Any) -> None:
    """Turn checksums off on this JVM's local file system, where a local checkpoint goes.

    Hadoop's local file system writes a ``.crc`` file beside every file, one more file
    (and one more forked ``chmod``) per offset, commit and state file. Its raw file
    system writes none, but cannot be made the ``file:`` scheme's: RocksDB's state
    store uploads its snapshots through ``FileSystem.getLocal``, which casts to the
    checksummed class, so every upload fails, and after some minutes a commit fails
    with them. So the one cached instance that ``file:`` paths resolve to in
    this JVM (the driver's, and in local mode the executor's) is told to skip
    checksums; executors of a cluster keep them.
    """
    jvm = spark.sparkContext._jvm
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(
        spark.sparkContext._jsc.hadoopConfiguration()
    )
    local.setWriteChecksum(False)
    local.setVerifyChecksum(False)


def run(
    config: PipelineConfig,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
    resume: bool = False,
) -> int:
    """Run the pipeline until ``stop`` is set or ``max_seconds``; EngineError if it fails.

    ``resume``: the query continues from the run's checkpoint (its offsets and state),
    as after an engine restart; otherwise a used run directory or checkpoint is refused.
    """
    prepare(config, run_dir, resume)
    settings = spark_settings(config)
    name = f"stagebench-{config.stage}-{config.impl}"
    spark = build_session(name, settings.master, settings.conf(config))
    if config.local_checkpoint:
        plain_local_files(spark)
    spark.streams.addListener(ProgressWriter(run_dir / rundir.PROGRESS))
    query = None
    try:
        query = start(spark, config)
        log.info("query %s started: stage %s, impl %s", query.id, config.stage, config.impl)
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        ready_file = run_dir / rundir.READY
        while not stop.is_set():
            if query.awaitTermination(POLL_S):
                raise EngineError(f"the {config.stage} query stopped by itself")
            if not ready_file.exists() and ready(query, config.trigger == REAL_TIME):
                # the application id names this job's executors (a worker-loss fault)
                files.write(ready_file, spark.sparkContext.applicationId + "\n")
            if deadline is not None and time.monotonic() >= deadline:
                break
    except StreamingQueryException as err:
        raise EngineError(f"the {config.stage} query failed: {first_line(err)}") from err
    finally:
        if query is not None and query.isActive:
            query.stop()
        spark.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.spark.job --config RUN_DIR/pipeline.json`` (or under spark-submit)."""
    return process.main(
        run, "engines.spark.job", "Run the Spark pipeline a pipeline.json describes.", argv
    )


if __name__ == "__main__":
    sys.exit(main())
