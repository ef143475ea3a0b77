"""Kafka Streams' own settings, the table ``[engine.kafka-streams]``, and the Kafka Streams
properties they make.

Every latency-relevant Kafka Streams setting is an explicit field here, with its reason, so
that a result carries exactly what produced it; :meth:`KafkaStreamsSettings.properties`
turns them into the properties the job's ``KafkaStreams`` client gets.
"""

from dataclasses import dataclass, field
from typing import Literal

from engines.config import EngineSettings, PipelineConfig
from ground.config import require
from ground.errors import ConfigError
from ground.kafka import MAX_MESSAGE_BYTES, client

GUARANTEES = {"at-least-once": "at_least_once", "exactly-once-v2": "exactly_once_v2"}
"""``processing_guarantee``: its Kafka Streams value."""
_SUPPLIERS = "org.apache.kafka.streams.state.BuiltInDslStoreSuppliers"
STATE_STORES = {
    "in-memory": f"{_SUPPLIERS}$InMemoryDslStoreSuppliers",
    "rocksdb": f"{_SUPPLIERS}$RocksDBDslStoreSuppliers",
}
"""``state_store``: the suppliers of every store the DSL makes (the join's, the windows')."""


LOST_INSTANCE_MS = 6000
"""The session timeout of each of several instances: how long a lost one's tasks wait."""


@dataclass(frozen=True)
class KafkaStreamsSettings(EngineSettings):
    """``[engine.kafka-streams]``: how Kafka Streams runs a stage."""

    producer_linger_ms: int = field(
        default=0,
        metadata={
            "tune": (0, 5, 100),
            "help": "producer.linger.ms: how long the producer waits to fill a batch (Kafka "
            "Streams' own default is 100 ms); 0 sends each output at once",
        },
    )
    cache_max_bytes: int = field(
        default=0,
        metadata={
            "tune": (0, 10_485_760),
            "help": "statestore.cache.max.bytes: a record cache holds a store's updates "
            "until a commit or a full cache; 0 forwards each update at once (the windows' "
            "updates, and their close, reach the next operator without waiting)",
        },
    )
    commit_interval_ms: int = field(
        default=100,
        metadata={
            "tune": (100, 1000),
            "help": "commit.interval.ms: how often offsets (and with exactly-once the "
            "transaction) are committed; with a cache of 0 and at-least-once it holds no "
            "output back, and a short one leaves less to redo after a restart",
        },
    )
    join_grace_ms: int = field(
        default=5000,
        metadata={
            "help": "grace of the join window: an input this far behind its task's stream "
            "time still joins; the inner join emits each pair as soon as both are in, so "
            "grace costs only state kept, never latency"
        },
    )
    max_task_idle_ms: int = field(
        default=500,
        metadata={
            "help": "max.task.idle.ms: how long a task with one input topic's partition "
            "empty waits for it before it processes the other's records; both topics get "
            "data every few ms, so a wait costs little, and without one a task that "
            "fetched one topic ahead moves its stream time past windows the other's "
            "inputs still belong to, which then drop them as late"
        },
    )
    processing_guarantee: Literal["at-least-once", "exactly-once-v2"] = field(
        default="at-least-once",
        metadata={
            "help": "processing.guarantee: at-least-once for latency runs; exactly-once-v2 "
            "writes in transactions committed every commit interval (a reader of committed "
            "records sees an output only then)"
        },
    )
    state_store: Literal["in-memory", "rocksdb"] = field(
        default="in-memory",
        metadata={
            "help": "the join's and the windows' state stores: in-memory (restored from "
            "their changelogs after a restart) or rocksdb (on disk, a 73 MB jar downloaded "
            "on first use, a serialization and a disk write per update)"
        },
    )
    stream_threads: int = field(
        default=1,
        metadata={
            "help": "num.stream.threads: each thread runs whole tasks, one per input "
            "partition; one thread leaves the other cores to Kafka and the publisher"
        },
    )

    instances: int = field(
        default=1,
        metadata={
            "help": "Kafka Streams JVMs of the one application, sharing the input "
            "partitions as a service's instances do (each needs a task: at least as many "
            "partitions a topic)",
            "option": True,
        },
    )

    def __post_init__(self) -> None:
        for name in ("producer_linger_ms", "cache_max_bytes", "join_grace_ms", "max_task_idle_ms"):
            require(getattr(self, name) >= 0, f"{name} must be >= 0")
        require(self.commit_interval_ms >= 1, "commit_interval_ms must be >= 1")
        require(self.stream_threads >= 1, "stream_threads must be >= 1")
        require(self.instances >= 1, "instances must be >= 1")
        require(
            self.processing_guarantee in GUARANTEES,
            f"processing_guarantee must be one of {', '.join(GUARANTEES)}, "
            f"got {self.processing_guarantee!r}",
        )
        require(
            self.state_store in STATE_STORES,
            f"state_store must be one of {', '.join(STATE_STORES)}, got {self.state_store!r}",
        )

    def check(self, pipeline: PipelineConfig, input_partitions: int, fault: str | None) -> None:
        # both input topics are one stream: a task per partition number
        if fault == "instance-loss" and self.instances < 2:
            raise ConfigError(
                "instance-loss kills one instance of several: give --instances 2 or more "
                "(and at least as many partitions a topic)"
            )
        tasks = max(input_partitions // 2, 1)
        threads = self.stream_threads * self.instances
        if threads > tasks:
            what = f"{self.instances} instances of {self.stream_threads} stream thread(s)"
            raise ConfigError(
                f"{what} but the input topics make {tasks} task(s), one per partition: "
                f"{threads - tasks} thread(s) would stay idle; use at least {threads} "
                "partitions (--partitions) or fewer threads"
            )

    def properties(self, pipeline: PipelineConfig, instance: int = 0) -> dict[str, str]:
        """The Kafka Streams properties of ``pipeline``'s job (of its ``instance``-th JVM:
        a state directory and a group member of its own)."""
        several = self.instances > 1
        member = f"stagebench-{pipeline.run_id}" + (f"-{instance}" if several else "")
        state = pipeline.checkpoint_dir + (f"/instance-{instance}" if several else "")
        return {
            # a secured cluster's client settings (TLS, SASL), for every client of the job
            **client.java_properties(),
            # unique per run: a restarted job (--resume) continues from its offsets and state
            "application.id": f"stagebench-{pipeline.run_id}",
            "bootstrap.servers": pipeline.bootstrap,
            # static membership: a restarted job takes its predecessor's place in the
            # group at once; a new member would wait out the dead one's session (45 s)
            "main.consumer.group.instance.id": member,
            "state.dir": state,
            # a lost instance's tasks move to the others when its session times out: the
            # broker's least (group.min.session.timeout.ms), not the default 45 s
            **({"main.consumer.session.timeout.ms": str(LOST_INSTANCE_MS)} if several else {}),
            "auto.offset.reset": pipeline.starting_offsets,
            "processing.guarantee": GUARANTEES[self.processing_guarantee],
            "commit.interval.ms": str(self.commit_interval_ms),
            "max.task.idle.ms": str(self.max_task_idle_ms),
            "statestore.cache.max.bytes": str(self.cache_max_bytes),
            "num.stream.threads": str(self.stream_threads),
            "dsl.store.suppliers.class": STATE_STORES[self.state_store],
            "producer.linger.ms": str(self.producer_linger_ms),
            # ingest embeds its input: a 1 MiB input (faulty-event) makes a larger output
            "producer.max.request.size": str(MAX_MESSAGE_BYTES),
        }


def kafka_streams_settings(pipeline: PipelineConfig) -> KafkaStreamsSettings:
    """The Kafka Streams settings of a pipeline Kafka Streams runs."""
    assert isinstance(pipeline.settings, KafkaStreamsSettings), "not a pipeline Kafka Streams runs"
    return pipeline.settings
