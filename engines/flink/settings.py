"""Flink's own settings, the table ``[engine.flink]``, and the Flink and Kafka options
they make.

Every latency-relevant setting is an explicit field so that a result carries exactly
what produced it: :meth:`FlinkSettings.table_conf` turns them into Flink configuration,
:meth:`FlinkSettings.source_kafka` and :meth:`FlinkSettings.sink_kafka` into the Kafka
tables' options.
"""

from dataclasses import dataclass, field

from engines.config import IDLE_PROGRESS_MS, EngineSettings, PipelineConfig
from ground.config import require
from ground.kafka import MAX_MESSAGE_BYTES, client
from ground.kafka.ports import LOOPBACK
from ground.stages import stage

LOOPBACK_CONF = {
    key: LOOPBACK
    for key in ("rest.address", "rest.bind-address", "jobmanager.bind-host",
                "taskmanager.bind-host", "taskmanager.host")
}  # fmt: skip
"""A local mini-cluster's REST endpoint, blob server and task manager listen on the
loopback interface only (Flink's default: every interface)."""


@dataclass(frozen=True)
class FlinkSettings(EngineSettings):
    """``[engine.flink]``: how Flink runs a stage."""

    linger_ms: int = field(
        default=0,
        metadata={
            "tune": (0, 5, 50),
            "help": "the sink producer's linger.ms: how long it waits to fill a batch "
            "(Flink's bundled Kafka client waits 5 ms by default; 0 sends each output at "
            "once)",
        },
    )
    buffer_timeout_ms: int = field(
        default=0,
        metadata={
            "tune": (0, 10, 100),
            "help": "execution.buffer-timeout.interval: how long a network buffer between "
            "operators waits to fill (Flink's default 100 ms is added after every shuffle; "
            "0 flushes each record)",
        },
    )
    parallelism: int = field(
        default=1,
        metadata={
            "tune": (1, 2),
            "help": "parallelism.default: every operator's parallel instances; one reads "
            "all the input partitions, more leave a subtask without a partition (see "
            "idle_timeout_ms)",
        },
    )
    idle_timeout_ms: int = field(
        default=10_000,
        metadata={
            "help": "table.exec.source.idle-timeout: a source partition or subtask without "
            "input this long stops holding the watermark back (without it a subtask with no "
            "partition holds a window stage's watermark for ever); one that has input "
            "again is late by as much as the others moved on, and the join and windows "
            "drop it (0: never idle, for broker faults)"
        },
    )
    """With 1 s, an engine-restart run of join lost every input appended during the
    outage (3 396): catching up on the backlog, a partition the reader had not reached
    for a second was left out of the watermark, which the others then moved past it."""
    watermark_interval_ms: int = field(
        default=IDLE_PROGRESS_MS,
        metadata={
            "help": "pipeline.auto-watermark-interval: how often the source emits a "
            "watermark when idle; the windows close on each event's watermark "
            "('scan.watermark.emit.strategy' = 'on-event')"
        },
    )
    checkpoint_interval_ms: int = field(
        default=0,
        metadata={
            "help": "execution.checkpointing.interval; 0 (off) for latency runs: a "
            "checkpoint's barrier alignment delays records"
        },
    )
    cluster: str = field(
        default="",
        metadata={
            "help": "a Flink session cluster's REST address, HOST:PORT, that runs the job "
            "instead of a local mini-cluster (its task managers need the checkpoint "
            "directory as this machine names it when checkpoint_interval_ms is set)",
            "default": "none: a local mini-cluster",
            "option": "--flink-cluster",
            "metavar": "HOST:PORT",
        },
    )
    flink_conf: dict[str, str] = field(
        default_factory=dict,
        metadata={"help": "extra Flink configuration, overrides every other setting"},
    )

    def __post_init__(self) -> None:
        require(self.linger_ms >= 0, "linger_ms must be >= 0")
        require(self.buffer_timeout_ms >= -1, "buffer_timeout_ms must be >= -1 (-1: when full)")
        require(self.parallelism >= 1, "parallelism must be >= 1")
        require(self.idle_timeout_ms >= 0, "idle_timeout_ms must be >= 0 (0: off)")
        require(self.watermark_interval_ms >= 1, "watermark_interval_ms must be >= 1")
        require(self.checkpoint_interval_ms >= 0, "checkpoint_interval_ms must be >= 0 (0: off)")
        if self.cluster:
            self.rest_address()
        require(
            isinstance(self.flink_conf, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in self.flink_conf.items()),
            "flink_conf keys and values must be strings",
        )

    @property
    def place(self) -> str:
        where = f"session cluster {self.cluster}" if self.cluster else "local mini-cluster"
        return f"{where}, parallelism {self.parallelism}"

    def rest_address(self) -> tuple[str, int]:
        """The session cluster's REST host and port; ConfigError unless ``cluster`` is one."""
        host, _, port = self.cluster.rpartition(":")
        require(
            bool(host) and port.isdigit() and 0 < int(port) < 65536,
            f"cluster must be a session cluster's REST address HOST:PORT, got {self.cluster!r}",
        )
        return host.strip("[]"), int(port)

    def check(self, pipeline: PipelineConfig, input_partitions: int, fault: str | None) -> None:
        require(
            fault != "engine-restart" or not self.cluster,
            "engine-restart restarts the job on this machine's mini-cluster: leave out "
            "--flink-cluster for it",
        )
        require(
            fault not in ("broker-restart", "broker-kill") or not self.idle_timeout_ms,
            f"a {fault} longer than idle_timeout_ms leaves every partition idle, and the "
            "first one back moves the watermark past the others' backlog (10 s down with "
            "the default 10 s: the join dropped 4,006 inputs as late): set [engine.flink] "
            "idle_timeout_ms = 0 for broker faults",
        )
        require(
            fault != "engine-restart" or self.checkpoint_interval_ms > 0,
            "engine-restart resumes Flink from its latest checkpoint: set "
            "[engine.flink] checkpoint_interval_ms (e.g. 1000)",
        )
        require(
            self.parallelism <= input_partitions
            or self.idle_timeout_ms > 0
            or not stage(pipeline.stage).stateful,
            f"parallelism {self.parallelism} is above the {input_partitions} input partitions: "
            "the subtasks without a partition hold every watermark back unless "
            "idle_timeout_ms > 0",
        )

    def table_conf(self, pipeline: PipelineConfig) -> dict[str, str]:
        """The Flink configuration ``pipeline`` runs with, ``flink_conf`` applied last."""
        conf = {
            "table.local-time-zone": "UTC",
            "parallelism.default": str(self.parallelism),
            "execution.buffer-timeout.interval": f"{self.buffer_timeout_ms} ms",
            "pipeline.auto-watermark-interval": f"{self.watermark_interval_ms} ms",
            "pipeline.name": f"stagebench-{pipeline.stage}-{pipeline.run_id}",
        }
        if self.cluster:
            host, port = self.rest_address()
            conf.update({"execution.target": "remote", "rest.address": host,
                         "rest.port": str(port)})  # fmt: skip
        else:
            conf.update(LOOPBACK_CONF)
        if self.idle_timeout_ms:
            conf["table.exec.source.idle-timeout"] = f"{self.idle_timeout_ms} ms"
        if self.checkpoint_interval_ms:
            conf["execution.checkpointing.interval"] = f"{self.checkpoint_interval_ms} ms"
            conf["execution.checkpointing.dir"] = _file_uri(pipeline.checkpoint_dir)
        if stage(pipeline.stage).updates:
            # an updating window's state, kept a while after its second (Spark: the watermark)
            conf["table.exec.state.ttl"] = f"{max(60_000, 10 * pipeline.watermark_delay_ms)} ms"
        conf.update(self.flink_conf)
        return conf

    def source_kafka(self) -> dict[str, str]:
        """The Kafka source table's options beyond topics and group."""
        return {
            **secured(),
            # windows close as soon as a record moves the watermark, not at the next tick
            "scan.watermark.emit.strategy": "on-event",
            # offsets committed as read, checkpoints or not: the job's progress events
            "properties.enable.auto.commit": "true",
            "properties.auto.commit.interval.ms": str(IDLE_PROGRESS_MS // 2),
            "properties.fetch.max.wait.ms": "5",
        }

    def sink_kafka(self) -> dict[str, str]:
        """The Kafka sink table's options beyond the topic."""
        return {
            **secured(),
            "properties.linger.ms": str(self.linger_ms),
            "properties.acks": "1",
            "properties.max.request.size": str(MAX_MESSAGE_BYTES),
        }


def secured() -> dict[str, str]:
    """A secured cluster's client properties (TLS, SASL: :mod:`ground.kafka.client`) as
    options of a Kafka table."""
    return {f"properties.{key}": value for key, value in client.java_properties().items()}


def _file_uri(path: str) -> str:
    return path if "://" in path else "file://" + path


def flink_settings(pipeline: PipelineConfig) -> FlinkSettings:
    """The Flink settings of a pipeline Flink runs."""
    assert isinstance(pipeline.settings, FlinkSettings), "not a pipeline Flink runs"
    return pipeline.settings
