"""The evaluator's configuration: what part of a run is measured and how it is reported.

One frozen dataclass, validated once; build it from a TOML section or CLI
overrides with :func:`ground.config.from_mapping`.
"""

from dataclasses import dataclass, field

from ground.config import require

SETTLE_WINDOWS = 3
"""Consecutive windows whose medians the live check compares. With two windows of 60 s,
46 % of series falling 15 %/min (AR(1) noise, φ = 0.8, 10 % of the level) ended their
warm-up between 240 and 300 s, and 65 % at 15 %; with three, 0.2 and 1.2 % (1 000
series each; ``benchmarks/statistics_coverage.py``, ``warmup``)."""
MIN_BASELINE_SECONDS = 5
"""Seconds with outputs a recovery baseline needs (a median of fewer says little)."""
STEADY_TOLERANCE = 0.10
"""Default of ``steady_tolerance``; here, not in :mod:`evaluator.statistics.steady`, so that reading
the settings loads no numpy."""


@dataclass(frozen=True)
class EvaluatorConfig:
    """How a run's outputs are evaluated.

    The same time rule selects outputs and expected outputs (by their
    ``input_ts_latest``), so completeness and latency describe the same records.
    ``read_before_s`` holds for a stage that writes one output per input and a run without
    disturbances (:func:`evaluator.run_topics.read_from_ms`): a capacity probe's evaluation
    then reads its measured period, not its lead-in and warm-up.
    ``steady_tolerance``: set it no larger than the smallest increment you want to resolve
    between stages or settings: a period is called steady only when the whole 95 % interval
    of its drift lies within ±tolerance, and such a drift moves the period's p50 by about
    half that or less, so two steady runs do not differ by the tolerance through drift
    alone. The smaller it is, the longer a period must be to be called steady: the interval
    narrows as √seconds.
    """

    warmup_s: float | None = field(
        default=None,
        metadata={
            "help": "seconds trimmed after the first input or the run's start mark "
            "(0 keeps everything)",
            "default": "10 % of the run",
        },
    )
    end_cut_s: float = field(
        default=0.0, metadata={"help": "seconds trimmed before the last input"}
    )
    sliding_window_s: int = field(
        default=3,
        metadata={
            "help": "the sliding stage's window, seconds (the pipeline's "
            "window_length_ms), for the expected outputs"
        },
    )
    lookback_short_s: int = field(
        default=1,
        metadata={
            "help": "the sliding stage's short lookback, seconds (the pipeline's "
            "lookback_short_ms), for the expected outputs"
        },
    )
    lookback_long_s: int = field(
        default=2,
        metadata={
            "help": "the sliding stage's long lookback, seconds (the pipeline's "
            "lookback_long_ms), for the expected outputs"
        },
    )
    batch_size: int = field(
        default=50_000, metadata={"help": "records the reader takes from Kafka at a time"}
    )
    idle_timeout_s: float = field(
        default=30.0,
        metadata={"help": "seconds without a record before the reader gives up on a topic"},
    )
    read_before_s: float | None = field(
        default=None,
        metadata={
            "help": "read the topics only from this many seconds before the run's marked "
            "start of its measured period",
            "default": "whole topics",
        },
    )
    recovery_baseline_s: float = field(
        default=20.0,
        metadata={
            "help": "after a disturbance (a burst, a fault): the seconds before it whose "
            "median per-second p50 latency must come back (evaluator.recovery)"
        },
    )
    recovery_threshold: float = field(
        default=0.2,
        metadata={
            "help": "after a disturbance, latency has recovered when its per-second p50 "
            "is back within this fraction of the baseline's median"
        },
    )
    steady_tolerance: float = field(
        default=STEADY_TOLERANCE,
        metadata={
            "help": "the change of the per-second p50 over the measured period, as a "
            "share of its median, that still counts as steady (evaluator.statistics.steady); a "
            "run's auto warm-up ends only once its latency has settled to it"
        },
    )

    def __post_init__(self) -> None:
        require(
            self.warmup_s is None or self.warmup_s >= 0,
            f"warmup_s must be >= 0 or unset (10 % of the run), got {self.warmup_s}",
        )
        require(self.end_cut_s >= 0, f"end_cut_s must be >= 0, got {self.end_cut_s}")
        require(
            self.sliding_window_s >= 2,
            f"sliding_window_s must be >= 2, got {self.sliding_window_s}",
        )
        require(
            0 < self.lookback_short_s < self.lookback_long_s,
            "the lookbacks must satisfy 0 < lookback_short_s < lookback_long_s, got "
            f"{self.lookback_short_s} and {self.lookback_long_s}",
        )
        require(self.batch_size > 0, f"batch_size must be > 0, got {self.batch_size}")
        require(self.idle_timeout_s > 0, f"idle_timeout_s must be > 0, got {self.idle_timeout_s}")
        require(
            self.read_before_s is None or self.read_before_s >= 0,
            f"read_before_s must be >= 0 or unset (whole topics), got {self.read_before_s}",
        )
        require(
            self.recovery_baseline_s >= MIN_BASELINE_SECONDS,
            f"recovery_baseline_s must be >= {MIN_BASELINE_SECONDS} (a baseline needs "
            f"{MIN_BASELINE_SECONDS} seconds with outputs), got {self.recovery_baseline_s}",
        )
        require(
            self.recovery_threshold > 0,
            f"recovery_threshold must be > 0, got {self.recovery_threshold}",
        )
        require(
            0 < self.steady_tolerance < 1,
            f"steady_tolerance must be > 0 and < 1, got {self.steady_tolerance}",
        )

    def warmup_ms(self, run_ms: int) -> int:
        """The warm-up in ms for a run of ``run_ms`` (default 10 % of it)."""
        if self.warmup_s is None:
            return run_ms // 10
        return round(self.warmup_s * 1000)
