"""The pipeline's configuration: which stage, which engine and implementation, the
stage's parameters, and the engine's own settings.

Every latency-relevant setting is an explicit field, here or in the engine's settings
(:class:`EngineSettings`), so that a result carries exactly what produced it.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from engines import registry
from engines.base import Impl
from ground.config import from_mapping, require
from ground.errors import ConfigError
from ground.stages import PROCESSING_TIME

IDLE_PROGRESS_MS = 200
"""How often an idle query reports (``spark.sql.streaming.noDataProgressEventInterval``),
and the floor with it: the runner sees a job drained after two empty reports
(stagebench.run.job.drained); a job with input is never idle that long."""


@dataclasses.dataclass(frozen=True)
class EngineSettings:
    """An engine's own settings, the table ``[engine.<name>]`` of a configuration file: a
    frozen dataclass of this base whose fields are the table's keys, each with ``help``
    in its metadata (``option: True`` makes it an option of run, suite and capacity too;
    ``tune``: its candidate values from the latency end to the throughput end, for
    ``--profile`` and ``capacity --tune``), validated in ``__post_init__``. A run records
    them in config.json under that name."""

    @property
    def place(self) -> str | None:
        """Where the engine runs, for progress lines ("master local[2]"); None: here."""
        return None

    def check(self, pipeline: "PipelineConfig", input_partitions: int, fault: str | None) -> None:
        """ConfigError when these settings cannot run ``pipeline`` on input topics of
        ``input_partitions`` partitions in all, with ``fault`` injected (checked before
        any topic or broker is touched)."""

    def session_conf(self, pipeline: "PipelineConfig") -> dict[str, Any] | None:
        """What a session shared by a suite's runs must have been started with to run
        ``pipeline``'s query exactly as a job of its own would; None: it runs in a job of
        its own."""
        return None


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    """One pipeline run: the stage ladder up to ``stage``, written to ``output_topic``."""

    stage: str
    output_topic: str
    run_id: str
    bootstrap: str
    checkpoint_dir: str
    """Fresh per run: a reused checkpoint would resume old offsets and state."""
    engine: str = dataclasses.field(
        default="",
        metadata={
            "help": f"the stream engine that runs the stage ({', '.join(registry.NAMES)}); the "
            "floor runs as the floor whatever is named",
            "default": "the stage's: spark, the floor for the floor",
            "choices": registry.NAMES,
        },
    )
    impl: Impl = dataclasses.field(
        default="builtin",
        metadata={
            "help": "window implementation: the engine's window operators (builtin), or its "
            "state and timers written out by hand, emitting a window once its data are "
            "complete (custom: tumbling and sliding only)"
        },
    )
    speed_topic: str = dataclasses.field(default="speed", metadata={"help": "speed topic"})
    flow_topic: str = dataclasses.field(default="flow", metadata={"help": "flow topic"})
    trigger: str = dataclasses.field(
        default=PROCESSING_TIME,
        metadata={
            "help": "execution mode: processing-time (every engine's own loop or "
            "micro-batches) or an engine's own (Spark's real-time: ingest, parse and "
            "tumbling-union)"
        },
    )
    watermark_delay_ms: int = dataclasses.field(
        default=500,
        metadata={
            "help": "allowed lateness of event time (observation_ts) of the join and the "
            "windows: an input this far or further behind the newest of its own topic "
            "(of either topic, for tumbling-union) may be dropped; observation times are "
            "whole seconds, so 1 to 999 ms close every window at the same micro-batch "
            "(docs/method.md#watermark)"
        },
    )
    join_range_ms: int = dataclasses.field(
        default=0,
        metadata={
            "help": "event-time range of the join condition; speed and flow twins share "
            "observation_ts"
        },
    )
    starting_offsets: Literal["earliest", "latest"] = dataclasses.field(
        default="earliest", metadata={"help": "Kafka source startingOffsets"}
    )
    window_length_ms: int = dataclasses.field(
        default=3000, metadata={"help": "sliding window length"}
    )
    window_slide_ms: int = dataclasses.field(
        default=1000, metadata={"help": "sliding window slide"}
    )
    lookback_short_ms: int = dataclasses.field(
        default=1000, metadata={"help": "short-term change lookback"}
    )
    lookback_long_ms: int = dataclasses.field(
        default=2000, metadata={"help": "long-term change lookback"}
    )
    settings: EngineSettings | None = None
    """The engine's own settings (``[engine.<name>]``, :class:`EngineSettings`): its
    settings class's, built here from a mapping (the table, pipeline.json); None for an
    engine without any."""

    def __post_init__(self) -> None:
        found = registry.chosen(self.engine, self.stage)
        found.check(self.stage, self.impl, self.trigger)
        given: object = self.settings
        built: EngineSettings | None = None
        if found.settings is None and given:
            raise ConfigError(f"{found.title} has no settings of its own, got {given!r}")
        if found.settings is not None:
            if isinstance(given, EngineSettings) and isinstance(given, found.settings):
                built = given
            elif given is None or isinstance(given, Mapping):
                built = from_mapping(found.settings, given or {}, f"engine.{found.name}")
            else:
                raise ConfigError(f"{found.whose} settings must be [engine.{found.name}]'s")
        object.__setattr__(self, "settings", built)
        for name in ("output_topic", "run_id", "bootstrap", "checkpoint_dir"):
            require(bool(getattr(self, name)), f"{name} must not be empty")
        require(self.speed_topic != self.flow_topic, "speed_topic and flow_topic must differ")
        require(
            self.output_topic not in (self.speed_topic, self.flow_topic),
            "output_topic must differ from the input topics",
        )
        require(self.watermark_delay_ms >= 0, "watermark_delay_ms must be >= 0")
        require(self.join_range_ms >= 0, "join_range_ms must be >= 0")
        require(
            self.starting_offsets in ("earliest", "latest"),
            f"starting_offsets must be earliest or latest, got {self.starting_offsets!r}",
        )
        require(
            self.window_slide_ms >= 1000 and self.window_slide_ms % 1000 == 0,
            "window_slide_ms must be a positive multiple of 1000 (tumbling seconds)",
        )
        require(
            self.window_length_ms % 1000 == 0 and self.window_length_ms >= self.window_slide_ms,
            "window_length_ms must be a multiple of 1000 and >= window_slide_ms",
        )
        require(
            0 < self.lookback_short_ms < self.lookback_long_ms < self.window_length_ms,
            "lookbacks must satisfy 0 < short < long < window length",
        )
        require(
            self.lookback_short_ms % 1000 == 0 and self.lookback_long_ms % 1000 == 0,
            "lookbacks must be multiples of 1000 ms",
        )

    @property
    def local_checkpoint(self) -> bool:
        """The checkpoint is on the local file system (no scheme, or ``file:``)."""
        return "://" not in self.checkpoint_dir or self.checkpoint_dir.startswith("file:")
