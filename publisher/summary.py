"""What a publish run reports: live progress snapshots and the final summary.

The summary is stored with each run (``--summary PATH``), so it is a
versioned, JSON-ready record. Send lag is how long after its scheduled time a
message was handed to the Kafka client; a large lag means the publisher, not
the system under test, fell behind.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

SUMMARY_VERSION = 1


@dataclass(frozen=True)
class ProgressSnapshot:
    elapsed_s: float
    end_s: float
    """Scheduled run length (math.inf when bounded only by messages or EOF)."""
    sent: int
    delivery_errors: int
    rate: float
    """Messages/s handed to the client since the previous snapshot."""
    lag_ms: float
    """Largest send lag since the previous snapshot."""
    behind: bool
    """True when ``lag_ms`` exceeds the configured warning threshold."""


@dataclass(frozen=True)
class PublishSummary:
    speed_topic: str
    flow_topic: str
    workload: str
    target_rate: float
    """Base messages/s of the schedule (both topics); 0 for a replay (the file sets the pace)."""
    locations: int
    lanes: int
    time_scale: float
    messages: dict[str, int]
    """Messages handed to the client, per topic."""
    delivered: int
    delivery_errors: int
    undelivered: int
    """Still queued when the final flush timed out (neither delivered nor failed)."""
    achieved_rate: float
    per_second_rates: list[int]
    """Messages sent in each wall-clock second since the start."""
    send_lag_ms: dict[str, float]
    """p50, p99 and max of actual minus scheduled send time."""
    behind: bool
    """The publisher fell more than the warning threshold behind its schedule."""
    stopped_early: bool
    start_ms: int
    end_ms: int
    first_errors: list[str] = field(default_factory=list)
    replay: dict[str, Any] | None = None
    malformed: dict[str, int] | None = None
    """faulty-event: malformed records handed to the client per kind
    (:data:`ground.malformed.KINDS`), included in ``messages``; else None."""
    """An NDW file's :meth:`publisher.ndw.Report.to_dict`: lines read, pairs published,
    lines skipped (unreadable, without their twin, repeated) with examples; else None."""
    version: int = SUMMARY_VERSION

    @property
    def sent(self) -> int:
        return sum(self.messages.values())

    @property
    def ok(self) -> bool:
        return self.delivery_errors == 0 and self.undelivered == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lag_summary(lags_s: Sequence[float]) -> dict[str, float]:
    """Nearest-rank p50 and p99 and the max of send lags given in seconds, in ms."""
    if not len(lags_s):
        return {"p50": 0.0, "p99": 0.0, "max": 0.0}
    values = np.asarray(lags_s, dtype=float) * 1000
    p50, p99 = np.percentile(values, [50, 99], method="inverted_cdf")
    return {
        "p50": round(float(p50), 3),
        "p99": round(float(p99), 3),
        "max": round(float(values.max()), 3),
    }
