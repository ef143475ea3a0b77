"""The ``[run]`` table: what to run and for how long (:class:`RunConfig`).

A file's and the command line's values are layered over the defaults in
:mod:`stagebench.config.layers`.
"""

from dataclasses import dataclass, field
from typing import Literal

from engines import registry
from engines.base import IMPLS, Engine, Impl
from engines.registry import NAMES as ENGINES
from engines.registry import chosen
from evaluator.config import SETTLE_WINDOWS, STEADY_TOLERANCE
from ground.config import require
from ground.stages import STAGES, stage
from publisher.config import PublisherConfig
from publisher.workload import NAMES, workload
from stagebench.config.faults import BROKER_FAULTS, FAULTS

APPLICATIONS = ("shared", "per-run")


@dataclass(frozen=True)
class RunConfig:
    """What to run and for how long; the ``[run]`` table of a config file."""

    stage: str = field(
        default="ingest", metadata={"help": "last stage of the pipeline", "choices": STAGES}
    )
    engine: str = field(
        default="",
        metadata={
            "help": f"the stream engine that runs the stage ({', '.join(ENGINES)}); the "
            "floor runs as the floor whatever is named",
            "default": "the stage's: spark, the floor for the floor",
            "choices": ENGINES,
        },
    )
    impl: Impl = field(
        default="builtin",
        metadata={
            "help": "window implementation: the engine's window operators (builtin), or its "
            "state and timers written out by hand, emitting a window once its data are "
            "complete (custom: tumbling and sliding only)"
        },
    )
    workload: str = field(
        default="latency",
        metadata={
            "help": "latency: a constant rate; single-burst: a backlog published before the "
            "job starts; periodic-burst: a burst every "
            f"{PublisherConfig.burst_every_s:g} s on top of the rate; ramp: rising steps; "
            "faulty-event: the constant rate plus malformed records ([publisher] "
            f"faulty_fraction of all, default {PublisherConfig.faulty_fraction:g})",
            "choices": NAMES,
        },
    )
    rate: float = field(
        default=400.0,
        metadata={"help": "messages/s over both input topics (the base rate of burst workloads)"},
    )
    duration_s: float = field(
        default=60.0,
        metadata={
            "help": "measured seconds per run, once the job is running (single-burst: "
            "after the backlog)"
        },
    )
    warmup_s: float | str = field(
        default="auto",
        metadata={
            "help": "warm-up published at the rate before the measured period, whose "
            "outputs are left out by broker time: seconds, or auto: until the medians of "
            f"the per-second median latency in {SETTLE_WINDOWS} windows of settle_window_s "
            "in a row agree within [evaluator] steady_tolerance "
            f"({STEADY_TOLERANCE:.0%} unless set), at most warmup_max_s; a workload whose "
            "load is a backlog published before the job is measured from the job's start, "
            "with no warm-up",
        },
    )
    warmup_max_s: float = field(default=300.0, metadata={"help": "longest auto warm-up, seconds"})
    warmup_min_s: float | None = field(
        default=None,
        metadata={
            "help": "shortest auto warm-up of a job on a JIT in a process of its own, "
            "seconds, capped at warmup_max_s (the floor has none, nor has a run in a "
            "warmed-up shared application): a JIT can plateau before its next drop",
            "default": "the engine's own, from its measurement (docs/engines.md)",
        },
    )
    settle_window_s: float = field(
        default=60.0,
        metadata={
            "help": "auto warm-up: seconds per window of per-second latencies; the "
            f"medians of {SETTLE_WINDOWS} windows in a row must agree within [evaluator] "
            "steady_tolerance (evaluator.statistics.steady.is_settled); a run whose longest "
            "warm-up is shorter than those windows warns that it could not settle"
        },
    )
    profile: Literal["latency", "throughput"] = field(
        default="latency",
        metadata={
            "help": "the engine's settings that trade latency for throughput: latency (its "
            "defaults) or throughput (Flink's buffer timeout and linger, Kafka Streams' "
            "linger, cache and commit interval, Spark's trigger interval at their throughput "
            "end: docs/capacity.md#the-best-setting); a setting given explicitly wins",
            "choices": ("latency", "throughput"),
        },
    )
    application: str = field(
        default="shared",
        metadata={
            "help": "suite and capacity: shared runs the Spark stages' queries (a search's "
            "probes) in one Spark application, warmed up once (each Spark stage alone for "
            "app_warmup_s), so that each starts with what the JIT compiled; per-run starts "
            "a job of its own per run (runs with a fault, in real-time mode or with other "
            "Spark settings always do; capacity's default)",
            "choices": APPLICATIONS,
        },
    )
    app_warmup_s: float = field(
        default=40.0,
        metadata={
            "help": "shared application: seconds each Spark stage runs alone in its "
            "warm-up, not measured"
        },
    )
    app_warmup_rate: float = field(
        default=1.0,
        metadata={
            "help": "shared application: its warm-up's rate as a multiple of the rate (a "
            "capacity search's: of its first probe's)"
        },
    )
    warm_settle_window_s: float = field(
        default=14.0,
        metadata={
            "help": "auto warm-up of a run in a warmed-up shared application, and of the "
            "floor after it: seconds per settle window (settle_window_s otherwise); "
            "warmup_min_s does not apply there"
        },
    )
    """Windows of 14 s, not 10: the settle rule compares the windows' medians, and those of
    10 s wander too much to tell a fading start from the latency's own noise. On simulated
    starts of twice the level decaying with a 15 s time constant (wander 10 %), windows of
    10 s ended the warm-up with more than 5 % left in 24.6 % of series, windows of 14 s in
    0.9 % (``benchmarks/statistics_coverage.py``)."""
    lead_in_s: float = field(
        default=0.0,
        metadata={
            "help": "seconds published at half the rate ([publisher] lead_in_share) "
            "before the warm-up, so the job warms up without a start-up backlog; "
            "latency workload only; 0 leaves [publisher] lead_in_s"
        },
    )
    tail_s: float = field(
        default=3.0,
        metadata={
            "help": "seconds published after the measured period of a window stage, so its "
            "last windows close (the other stages need no later input and publish none)"
        },
    )
    drain_timeout_s: float = field(
        default=60.0,
        metadata={"help": "longest wait for the job to drain after the input stops, seconds"},
    )
    ready_timeout_s: float = field(
        default=300.0,
        metadata={
            "help": "longest wait for the engine's job to be running (its query, job or "
            "topology; your command's ready file), seconds"
        },
    )
    partitions: int = field(default=1, metadata={"help": "partitions per topic"})
    leader: int | None = field(
        default=None,
        metadata={
            "help": "broker id that leads every partition of the run's topics; on a "
            "cluster its clock is the run's one clock",
            "default": "the lowest",
        },
    )
    replication: int | None = field(
        default=None,
        metadata={
            "help": "replicas per partition of the run's topics, min.insync.replicas one less",
            "default": "the broker count, at most 3",
        },
    )
    fault: str | None = field(
        default=None,
        metadata={
            "help": "inject a fault fault_at_s into the measured period: "
            f"{', '.join(FAULTS)} (docs/method.md#faults)"
        },
    )
    fault_at_s: float = field(
        default=20.0,
        metadata={
            "help": "seconds into the measured period the fault comes; the period goes "
            "on for the duration minus this after it"
        },
    )
    fault_down_s: float = field(
        default=10.0, metadata={"help": "seconds a broker fault keeps the broker down"}
    )
    bootstrap: str | None = None
    checkpoint_root: str | None = field(
        default=None,
        metadata={
            "help": "where the job keeps its checkpoints and state (Spark's checkpoints, "
            "Flink's, Kafka Streams' state directory), on storage every node of a cluster "
            "reaches (e.g. an hdfs:// or s3a:// URI for Spark)",
            "default": "the run directory",
        },
    )
    results_dir: str = field(default="results", metadata={"help": "directory for run directories"})

    @property
    def published_tail_s(self) -> float:
        """The tail a run publishes: ``tail_s`` for a stage with event-time windows and for a
        user's job (which may have them), none for the others, whose every output needs
        only inputs of the measured period."""
        found = stage(self.stage)
        return self.tail_s if found.window or found.own else 0.0

    def runs_on(self) -> Engine:
        """The engine that runs this run's stage (``engine``, or the stage's default)."""
        return chosen(self.engine, self.stage)

    @property
    def shortest_warmup_s(self) -> float:
        """The auto warm-up's shortest: ``warmup_min_s``, else the engine's own
        (:attr:`engines.base.Engine.warmup_min_s`), capped by ``warmup_max_s``; none for
        the floor, which runs no JVM (nothing of it compiles late)."""
        engine = self.runs_on()
        if not engine.warms_up:
            return 0.0
        given = engine.warmup_min_s if self.warmup_min_s is None else self.warmup_min_s
        return min(given, self.warmup_max_s)

    def __post_init__(self) -> None:
        stage(self.stage)  # each raises ConfigError naming what is known
        self.runs_on()
        workload(self.workload)
        require(self.impl in IMPLS, f"impl must be one of {', '.join(IMPLS)}: {self.impl!r}")
        require(self.rate > 0, f"rate must be > 0, got {self.rate}")
        require(self.duration_s > 0, f"duration must be > 0, got {self.duration_s}")
        require(
            self.warmup_s == "auto"
            or (isinstance(self.warmup_s, int | float) and self.warmup_s >= 0),
            f"warmup must be auto or seconds >= 0, got {self.warmup_s!r}",
        )
        require(self.warmup_max_s > 0, f"warmup_max_s must be > 0, got {self.warmup_max_s}")
        require(
            self.warmup_min_s is None or self.warmup_min_s >= 0,
            f"warmup_min_s must be >= 0, got {self.warmup_min_s}",
        )
        require(
            5 <= self.settle_window_s <= self.warmup_max_s,
            "settle_window_s must be at least 5 s and at most warmup_max_s",
        )
        require(
            self.application in APPLICATIONS,
            f"application must be one of {', '.join(APPLICATIONS)}: {self.application!r}",
        )
        require(
            self.app_warmup_s > 0,
            f"app_warmup_s must be > 0, got {self.app_warmup_s} (application = per-run runs "
            "without a shared application)",
        )
        require(self.app_warmup_rate > 0, "app_warmup_rate must be > 0")
        require(
            5 <= self.warm_settle_window_s <= self.warmup_max_s,
            "warm_settle_window_s must be at least 5 s and at most warmup_max_s",
        )
        require(self.lead_in_s >= 0, f"lead_in_s must be >= 0, got {self.lead_in_s}")
        require(self.tail_s >= 0, "tail_s must be >= 0")
        require(self.drain_timeout_s > 0 and self.ready_timeout_s > 0, "timeouts must be > 0")
        require(self.partitions >= 1, "partitions must be >= 1")
        require(self.replication is None or self.replication >= 1, "replication must be >= 1")
        faults = BROKER_FAULTS + registry.faults()
        require(
            self.fault is None or self.fault in faults,
            f"fault must be one of {', '.join(faults)}: {self.fault!r}",
        )
        require(
            self.fault is None or 0 <= self.fault_at_s < self.duration_s,
            f"fault_at_s must be within the measured period (0 to {self.duration_s:g} s)",
        )
        require(self.fault_down_s > 0, "fault_down_s must be > 0")
        require(
            self.fault in (None, *BROKER_FAULTS) or self.fault in self.runs_on().faults,
            f"{self.fault} is a fault of an engine's job, and {self.runs_on().title} "
            f"takes none of that kind (it takes: {', '.join(self.runs_on().faults) or 'none'})",
        )
