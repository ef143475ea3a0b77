"""The publisher's configuration: one frozen, validated object.

Build it with ``ground.config.from_mapping(PublisherConfig, mapping,
"publisher")`` (unknown keys are errors). Size is given either as ``rate``
(messages per second across both topics, the locations are derived) or as
``locations`` (the rate is derived); see :mod:`publisher.sizing`.
"""

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

from ground.config import require
from publisher.workload import NAMES, workload

Acks = Literal["0", "1", "all"]

DEFAULT_RATE = 400.0
"""Messages per second of the papers' latency workload (docs/method.md#workloads)."""
DEFAULT_DURATION_S = 60.0


@dataclass(frozen=True)
class PublisherConfig:
    rate: float | None = field(
        default=None,
        metadata={
            "help": "base rate, messages/s over both topics",
            "default": f"{DEFAULT_RATE:g}, unless locations are given",
        },
    )
    locations: int | None = field(
        default=None,
        metadata={
            "help": "number of base locations; the rate follows from their lanes",
            "default": "from the rate",
        },
    )
    min_lanes: int = field(default=1, metadata={"help": "fewest lanes per location"})
    max_lanes: int = field(default=5, metadata={"help": "most lanes per location"})
    seed: int = field(default=42, metadata={"help": "seed of the synthetic data"})
    time_scale: float = field(
        default=1.0, metadata={"help": "data minutes published per wall-clock second"}
    )
    start_minute: int = field(
        default=420,
        metadata={
            "help": "time of day of the first data minute, minutes after midnight "
            "(420 = 07:00, rush hour)"
        },
    )
    workload: str = field(
        default="latency", metadata={"help": "shape of the load over time", "choices": NAMES}
    )
    burst_messages: int = field(
        default=38_000, metadata={"help": "periodic-burst: extra messages per burst"}
    )
    burst_every_s: float = field(
        default=10.0, metadata={"help": "periodic-burst: seconds between bursts"}
    )
    burst_duration_s: float = field(
        default=1.0,
        metadata={"help": "periodic-burst: seconds a burst is spread over, 0 = all due at once"},
    )
    backlog_s: float = field(
        default=300.0,
        metadata={"help": "single-burst: seconds published at backlog_rate before the base rate"},
    )
    backlog_rate: float = field(
        default=6_000.0, metadata={"help": "single-burst: messages/s of the backlog"}
    )
    ramp_rates: tuple[float, ...] = field(
        default=(), metadata={"help": "ramp: messages/s, one per step (comma-separated)"}
    )
    ramp_step_s: float = field(default=10.0, metadata={"help": "ramp: seconds per step"})
    lead_in_s: float = field(
        default=0.0,
        metadata={
            "help": "latency: seconds published at lead_in_share of the rate before the rate itself"
        },
    )
    """A capacity probe warms its job up this way: a cold job at the full rate builds a
    start-up backlog it may still be draining when measured (falling latency above
    capacity), where after a lead-in a rate above capacity shows rising latency."""
    lead_in_share: float = field(
        default=0.5, metadata={"help": "latency: share of the rate published in the lead-in"}
    )
    faulty_fraction: float = field(
        default=0.01,
        metadata={
            "help": "faulty-event: share of all records that are malformed (extra to the "
            "valid ones), of nine kinds in turn"
        },
    )
    duration_s: float | None = field(
        default=None,
        metadata={
            "help": "seconds to publish",
            "default": f"{DEFAULT_DURATION_S:g}; single-burst: backlog + "
            f"{DEFAULT_DURATION_S:g}; ramp: all steps; replay: the whole file",
        },
    )
    max_messages: int | None = field(
        default=None, metadata={"help": "stop after this many messages"}
    )
    acks: Acks = field(default="all", metadata={"help": "producer acks"})
    linger_ms: float = field(default=1.0, metadata={"help": "producer linger.ms"})
    speed_topic: str = field(default="speed", metadata={"help": "topic of speed observations"})
    flow_topic: str = field(default="flow", metadata={"help": "topic of flow observations"})
    from_file: str | None = field(
        default=None,
        metadata={
            "help": "replay this file instead of synthetic data: JSON lines of "
            "stagebench's messages, or an NDW export (publisher.ndw), told apart by its "
            "first lines, speed and flow twins paired",
            "default": "synthetic",
        },
    )
    key_field: str | None = field(
        default=None,
        metadata={
            "help": "replay from_file as your own records: each JSON line sent unchanged to "
            "the speed topic, keyed by this field (publisher.lines); malformed lines are "
            "counted, not sent",
            "default": "none: stagebench's or NDW's format",
        },
    )
    time_field: str | None = field(
        default=None,
        metadata={
            "help": "with key_field: send at the file's own pace, by this field's epoch ms "
            "divided by time_scale, instead of at rate",
            "default": "none: at rate",
        },
    )
    behind_warn_ms: float = field(
        default=100.0, metadata={"help": "warn when sends fall this many ms behind the schedule"}
    )

    def __post_init__(self) -> None:
        if isinstance(self.ramp_rates, list):
            object.__setattr__(self, "ramp_rates", tuple(self.ramp_rates))
        require(
            self.rate is None or self.locations is None,
            "give either rate or locations, not both (one is derived from the other)",
        )
        require(self.rate is None or self.rate > 0, f"rate must be > 0, got {self.rate}")
        require(
            self.locations is None or 1 <= self.locations <= 500_000,
            f"locations must be 1..500000, got {self.locations}",
        )
        require(
            1 <= self.min_lanes <= self.max_lanes <= 5,
            f"lanes must satisfy 1 <= min_lanes <= max_lanes <= 5, "
            f"got {self.min_lanes}..{self.max_lanes}",
        )
        require(self.time_scale > 0, f"time_scale must be > 0, got {self.time_scale}")
        require(0 <= self.start_minute < 1440, "start_minute must be 0..1439")
        workload(self.workload)  # ConfigError naming the workloads
        require(self.acks in get_args(Acks), f"acks must be one of {get_args(Acks)}")
        require(self.burst_messages >= 0, "burst_messages must be >= 0")
        require(self.burst_every_s > 0, "burst_every_s must be > 0")
        require(
            0 <= self.burst_duration_s <= self.burst_every_s,
            "burst_duration_s must be 0..burst_every_s",
        )
        require(self.backlog_s >= 0 and self.backlog_rate > 0, "backlog_s >= 0, backlog_rate > 0")
        require(self.ramp_step_s > 0, "ramp_step_s must be > 0")
        require(self.lead_in_s >= 0, f"lead_in_s must be >= 0, got {self.lead_in_s}")
        require(
            self.lead_in_s == 0 or self.workload == "latency",
            f"lead_in_s is for the latency workload only, not {self.workload}",
        )
        require(
            0 < self.lead_in_share <= 1,
            f"lead_in_share must be in (0, 1], got {self.lead_in_share}",
        )
        require(
            0 < self.faulty_fraction < 1,
            f"faulty_fraction must be between 0 and 1 (exclusive), got {self.faulty_fraction}",
        )
        require(
            self.workload != "ramp" or (bool(self.ramp_rates) and min(self.ramp_rates) > 0),
            "workload ramp needs ramp_rates, every rate > 0",
        )
        require(
            self.duration_s is None or self.duration_s > 0,
            f"duration_s must be > 0, got {self.duration_s}",
        )
        require(
            self.max_messages is None or self.max_messages > 0,
            f"max_messages must be > 0, got {self.max_messages}",
        )
        require(self.linger_ms >= 0, "linger_ms must be >= 0")
        require(
            bool(self.speed_topic)
            and bool(self.flow_topic)
            and self.speed_topic != self.flow_topic,
            "speed_topic and flow_topic must be two different names",
        )
        require(self.behind_warn_ms > 0, "behind_warn_ms must be > 0")
        require(
            self.key_field is None or self.from_file is not None,
            "key_field replays a file of your own records: give from_file too",
        )
        require(
            self.time_field is None or self.key_field is not None,
            "time_field paces a file of your own records: give key_field too",
        )

    @property
    def tick_s(self) -> float:
        """Wall-clock seconds per data minute."""
        return 1.0 / self.time_scale

    @property
    def end_s(self) -> float:
        """Scheduled run length in seconds (math.inf: bounded only by max_messages or EOF)."""
        if self.duration_s is not None:
            return self.duration_s
        if self.workload == "ramp":
            return len(self.ramp_rates) * self.ramp_step_s
        if self.max_messages is not None or self.from_file is not None:
            return math.inf
        if self.workload == "single-burst":
            return self.backlog_s + DEFAULT_DURATION_S
        return DEFAULT_DURATION_S
