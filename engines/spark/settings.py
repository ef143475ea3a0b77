"""Spark's own settings, the table ``[engine.spark]``: where it runs, its trigger, its
shuffle, its JVMs, and any Spark conf; and the Spark conf they make.

Every latency-relevant Spark setting is an explicit field here so that a result carries
exactly what produced it; :meth:`SparkSettings.conf` turns them into Spark conf.
"""

import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from engines.config import IDLE_PROGRESS_MS, EngineSettings, PipelineConfig
from ground.config import require
from ground.errors import ConfigError
from ground.stages import stage

REAL_TIME = "real-time"
"""Spark 4.3's real-time mode: continuous, with a checkpoint interval."""
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
FILE_SCHEME_CONF = "spark.hadoop.fs.file.impl"
"""The Spark setting that makes a class Hadoop's ``file:`` file system."""
FILE_SYSTEM_CLASS = "stagebench.hadoop.NioLocalFileSystem"
"""``file_permissions = "jvm"``: Hadoop's local file system with Java's own chmod call,
which the Spark engine compiles and puts on the driver's class path
(:mod:`engines.spark.local_file_system`)."""
LOCAL_CHECKPOINT_CONF = {
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing."
        "FileSystemBasedCheckpointFileManager"
    ),
}
"""Spark conf for a checkpoint on the local file system. Without Hadoop's native library,
which PySpark does not ship, Spark's default checkpoint manager forks ``readlink`` and
``chmod`` for every offset and commit file it renames into place, and the checksummed
file system doubles the files, which costs a micro-batch more than it spends on its data
(docs/spark.md#settings-stagebench-makes). The file system's manager renames with
rename(2), as atomic on a local disk; the local file system with its checksums off
(:func:`engines.spark.job.plain_local_files`) writes the same files. Not applied to a
checkpoint with a scheme (``hdfs://``, ``s3a://``), whose file system has its own costs."""


FILE_PERMISSIONS = ("jvm", "chmod")
GARBAGE_COLLECTORS = {"parallel": "-XX:+UseParallelGC", "jvm": ""}
"""``garbage_collector``: its flag for the driver JVM (none: the JVM's own
choice, G1 on a machine with 2 cores or more)."""
COLLECTOR_FLAG = re.compile(r"-XX:\+Use(Serial|Parallel|G1|Z|Shenandoah|Epsilon)GC\b")
"""A collector chosen in the user's own driver options: the JVM refuses to start with
two ("Multiple garbage collectors selected"), so that choice stands alone."""


@dataclass(frozen=True)
class SparkSettings(EngineSettings):
    """``[engine.spark]``: how Spark runs a stage."""

    master: str = field(
        default="local[2]",
        metadata={
            "help": "Spark master, e.g. spark://host:7077; local[2] is two local cores, "
            "leaving the others to Kafka and the publisher",
            "option": True,
        },
    )
    trigger_interval_ms: int = field(
        default=0,
        metadata={
            "tune": (0, 500, 2000),
            "help": "processing-time trigger interval; 0 starts the next micro-batch at once",
        },
    )
    real_time_checkpoint: str = field(
        default="5 minutes",
        metadata={
            "help": "real-time mode checkpoint interval, a Spark interval such as "
            "'10 seconds' (minimum 5 s; not a latency)"
        },
    )
    shuffle_partitions: int = field(
        default_factory=lambda: os.cpu_count() or 2,
        metadata={"help": "spark.sql.shuffle.partitions", "default": "number of cores"},
    )
    max_offsets_per_trigger: int | None = field(
        default=None,
        metadata={"help": "Kafka source maxOffsetsPerTrigger", "default": "unlimited"},
    )
    jit_threshold_scaling: float = field(
        default=0.25,
        metadata={
            "help": "HotSpot's -XX:CompileThresholdScaling for the driver and executor "
            "JVMs: the JIT compiles a method after this share of its default invocation "
            "counts (1 is the JVM's default)"
        },
    )
    """Much of a streaming job's code runs once per micro-batch, so at the default
    C2 reaches it only after minutes: on a 2-core machine ingest's p50 per 30 s still fell
    from 36 to 28 ms between the 2nd and the 7th minute of a run. At 0.25 it was flat from
    140 s, at the 7-minute level, for about the same CPU; join settled by 200 s, below the
    default's level. 0.05 over-compiled: join's CPU rose from 139 to 160 % of a core."""
    garbage_collector: Literal["parallel", "jvm"] = field(
        default="parallel",
        metadata={
            "help": "the driver JVM's garbage collector (in local mode the tasks run "
            "there too): parallel (-XX:+UseParallelGC) or jvm (the JVM's own choice, G1)"
        },
    )
    """Every micro-batch allocates buffers of 4 MB (its task binary's broadcast blocks,
    its tasks' serialized results). In the 2 GB driver G1 picks 1 MB regions, so each
    is humongous: it goes to the old generation, and once the heap is past G1's
    initiating threshold each one starts a young collection. How full the old
    generation is then sets the collections' rate, so the same JVM run twice was not
    the same: ingest in a JVM of its own after a 300 s warm-up gave p50 34, 35, 46 and
    44 ms within 70 minutes on a 2-core Intel Xeon VM, with 1.5–3.5 young collections
    a second in the fast ones and 3.4–6.8 in the slow ones. The parallel collector has
    no humongous objects: it collects the young generation when it is full (1.7 times
    a second, 4.5 ms each) and the whole heap when the old generation is (149–167 ms,
    three times in five minutes), and four such JVMs gave 29, 30, 30 and 30 ms. On a
    cluster the executors keep the JVM's choice: their heaps can be far larger, and a
    full collection takes longer the more is live (docs/spark.md#settings-stagebench-makes)."""
    file_permissions: Literal["jvm", "chmod"] = field(
        default="jvm",
        metadata={
            "help": "a local checkpoint with a local master: how each new file gets its "
            "permissions, jvm (Java's own chmod call, engines/spark/LocalFileSystem.scala) or "
            "chmod (Hadoop's own without its native library: a chmod process per file)"
        },
    )
    """Hadoop forks ``chmod`` for each file a local checkpoint gets, and the micro-batch
    waits for it: two per ingest batch, about 4 ms each from the driver's JVM on a
    2-core VM (engines/spark/local_file_system.py). With Java's own call three Quick start
    suites there gave ingest 24, 24 and 21 ms and join 259, 253 and 236, where three
    with the forks had given 29, 31 and 38 and 287, 284 and 279
    (docs/spark.md#settings-stagebench-makes). Only a local master runs the tasks in the
    driver's JVM, where the class is."""
    spark_conf: dict[str, str] = field(
        default_factory=dict,
        metadata={"help": "extra Spark conf, overrides every other setting", "flag": "--conf"},
    )
    """Extra Spark conf, applied last (overrides every setting above; ``extraJavaOptions``
    are appended to the JIT and collector options instead, and the JVM lets a later
    flag win; a collector of the user's own replaces ``garbage_collector``'s)."""

    def __post_init__(self) -> None:
        require(
            self.jit_threshold_scaling > 0,  # 0 would stop the JIT: interpreted only
            f"jit_threshold_scaling must be > 0, got {self.jit_threshold_scaling}",
        )
        require(
            self.file_permissions in FILE_PERMISSIONS,
            f"file_permissions must be jvm or chmod, got {self.file_permissions!r}",
        )
        require(
            self.garbage_collector in GARBAGE_COLLECTORS,
            f"garbage_collector must be one of {', '.join(GARBAGE_COLLECTORS)}, "
            f"got {self.garbage_collector!r}",
        )
        require(self.trigger_interval_ms >= 0, "trigger_interval_ms must be >= 0")
        require(self.shuffle_partitions >= 1, "shuffle_partitions must be >= 1")
        require(
            self.max_offsets_per_trigger is None or self.max_offsets_per_trigger >= 1,
            "max_offsets_per_trigger must be >= 1 or None (unlimited)",
        )
        require(
            isinstance(self.spark_conf, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in self.spark_conf.items()),
            "spark_conf keys and values must be strings",
        )

    @property
    def place(self) -> str:
        return f"master {self.master}"

    def local_cores(self) -> int | None:
        """Task slots of a local master; None for a cluster (not known here)."""
        if self.master == "local":
            return 1
        match = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", self.master)
        if match is None:
            return None
        return os.cpu_count() or 1 if match[1] == "*" else int(match[1])

    def check(self, pipeline: PipelineConfig, input_partitions: int, fault: str | None) -> None:
        require(
            fault != "worker-loss" or self.master.startswith("spark://"),
            "worker-loss kills an executor of a standalone cluster: give --master spark://…",
        )
        self.check_real_time_slots(pipeline, input_partitions)

    def real_time_slots(self, pipeline: PipelineConfig, input_partitions: int) -> int:
        """Task slots real-time mode keeps busy for the whole batch: one per input
        partition, and after a shuffle (a stateful stage's aggregation) one per shuffle
        partition too, since every stage of the plan runs at once."""
        shuffled = stage(pipeline.stage).stateful
        return input_partitions + (self.shuffle_partitions if shuffled else 0)

    def check_real_time_slots(self, pipeline: PipelineConfig, input_partitions: int) -> None:
        """ConfigError when real-time mode would get fewer task slots than its plan has
        tasks: the tasks left unscheduled never read their partitions, silently.
        Only a local master's slots are known here."""
        cores = self.local_cores()
        if pipeline.trigger != REAL_TIME or cores is None:
            return
        needed = self.real_time_slots(pipeline, input_partitions)
        if cores >= needed:
            return
        shuffle = (
            f" + {self.shuffle_partitions} shuffle partitions (shuffle_partitions)"
            if needed > input_partitions
            else ""
        )
        raise ConfigError(
            f"real-time mode needs a task slot for every task at once: {input_partitions} "
            f"input partitions{shuffle} = {needed}, but master {self.master} has {cores}; "
            f"use e.g. --master local[{needed}]"
        )

    def session_conf(self, pipeline: PipelineConfig) -> dict[str, Any] | None:
        """The master and every Spark setting: a shared application
        (:mod:`engines.spark.server`) started with them runs ``pipeline``'s query exactly
        as a job of its own would; real-time mode needs every task slot for itself."""
        if pipeline.trigger == REAL_TIME:
            return None
        return {"master": self.master, "spark_conf": dict(sorted(self.conf(pipeline).items()))}

    def conf(self, pipeline: PipelineConfig) -> dict[str, str]:
        """The Spark conf ``pipeline`` needs, with ``spark_conf`` overrides applied last."""
        conf = {
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
            # changelog checkpointing uploads only the changes per batch: shorter commits
            "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
            # the windows close through no-data batches when the watermark moves
            "spark.sql.streaming.noDataMicroBatches.enabled": "true",
            # an idle job reports every IDLE_PROGRESS_MS, not every 10 s
            "spark.sql.streaming.noDataProgressEventInterval": str(IDLE_PROGRESS_MS),
        }
        if pipeline.local_checkpoint:
            conf.update(LOCAL_CHECKPOINT_CONF)
            if self.file_permissions == "jvm" and self.local_cores() is not None:
                conf[FILE_SCHEME_CONF] = FILE_SYSTEM_CLASS
        conf.update(self.spark_conf)
        jit = (
            f"-XX:CompileThresholdScaling={self.jit_threshold_scaling:g}"
            if self.jit_threshold_scaling != 1
            else ""
        )
        driver = self.spark_conf.get("spark.driver.extraJavaOptions", "")
        collector = (
            "" if COLLECTOR_FLAG.search(driver) else GARBAGE_COLLECTORS[self.garbage_collector]
        )
        ours = {
            "spark.driver.extraJavaOptions": [collector, jit],
            "spark.executor.extraJavaOptions": [jit],
        }
        for key, flags in ours.items():
            if line := " ".join(flag for flag in [*flags, self.spark_conf.get(key, "")] if flag):
                conf[key] = line
        return conf


def spark_settings(pipeline: PipelineConfig) -> SparkSettings:
    """The Spark settings of a pipeline Spark runs."""
    assert isinstance(pipeline.settings, SparkSettings), "not a pipeline Spark runs"
    return pipeline.settings
