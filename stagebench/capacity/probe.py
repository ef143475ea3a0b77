"""One probe of a capacity search: what a sustainable probe must meet (:class:`Criteria`)
and the verdict on its run's summary (:func:`judge`), a pass, a failure, or a probe the
publisher could not feed. Pure: it reads the run's :class:`~evaluator.model.result.Summary`.
"""

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from evaluator.model.result import Summary
from evaluator.statistics.stats import PERCENTILES
from ground.config import require
from ground.errors import ConfigError
from stagebench.capacity import bottleneck
from stagebench.resources.summary import SATURATED_SHARE_WARN
from stagebench.results.capacity import Probe

PROBE_DRAIN_GRACE_S = 10.0
"""A probe waits ``--max-drain`` plus this for its job to drain (a latency run waits
60 s): the drain is seen within a few seconds of happening (two empty micro-batches),
and a job still busy beyond that has failed the drain criterion already, where an
overloaded probe would otherwise wait a latency run's full 60 s."""
PUBLISHER_SHORTFALL = 0.05
"""A probe whose broker received less than 95 % of its rate over the measured period was
not offered that rate: on a machine with idle cores the publisher is the bottleneck
(publisher-bound), on a saturated one the job starved it (unsustainable)."""
GROWING = 0.5
GROWING_CAP_MS = 1_000.0
"""A rising trend is held against a probe when it raised the latency over the measured
period by more than half its median or by more than 1 s. A rate above capacity by the
search's precision (10 %) raises it by seconds over a 30 s probe; a smaller rise, however
significant its slope, is drift of a stage that keeps up (docs/capacity.md#the-search)."""


SLO = re.compile(r"\s*(p\d+(?:[._]\d+)?)\s*=\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)\s*")
"""A latency target on the command line: ``p99=1s``, ``p50=250ms``, ``p99.9=2s``."""


def parse_slo(text: str) -> tuple[str, float]:
    """``"p99=1s"`` → ("p99", 1000.0); ConfigError naming the percentiles otherwise."""
    found = SLO.fullmatch(text)
    name = found[1].replace(".", "_") if found else ""
    if found is None or name not in PERCENTILES:
        raise ConfigError(
            f"--slo: expected PERCENTILE=BOUND with ms or s, such as p99=1s or p50=250ms "
            f"(percentiles: {', '.join(p.replace('_', '.') for p in PERCENTILES)}), got {text!r}"
        )
    bound = float(found[2]) * (1000 if found[3] == "s" else 1)
    require(bound > 0, f"--slo: the bound must be > 0, got {text!r}")
    return name, bound


@dataclass(frozen=True)
class Criteria:
    """What a sustainable probe must meet, over its measured period."""

    max_p50_ms: float = 10_000.0
    max_drain_s: float = 10.0
    max_engine_cpu_pct: float | None = None
    """Mean engine CPU as a share of all the machine's cores (the papers used 80 %); None:
    reported, not judged."""
    slo_ms: dict[str, float] = field(default_factory=dict)
    """Latency targets, percentile → its highest value (ms) over the measured period
    (``--slo p99=1s``): a probe meets the service-level objective or fails; none: the
    sustainable rate alone."""

    def __post_init__(self) -> None:
        require(self.max_p50_ms > 0, "--max-p50 must be > 0")
        require(self.max_drain_s > 0, "--max-drain must be > 0")
        require(
            self.max_engine_cpu_pct is None or 0 < self.max_engine_cpu_pct <= 100,
            "--max-cpu must be in (0, 100]",
        )


def judge(rate: float, summary: Summary, criteria: Criteria, run_dir: str | None = None) -> Probe:
    """The verdict on one probe's run summary."""
    meta = summary.metadata
    # the measured period's input, by broker time: the lead-in's half rate not counted
    achieved = summary.throughput.input_mps
    lat = summary.latency_ms
    machine = summary.machine or {}
    cores = machine.get("cores") or 1
    usage = meta.get("resources") or {}
    engine = usage.get("engine") or {}
    cpu = engine.get("cpu_percent_mean")
    cpu_share = None if cpu is None else cpu / cores
    intended = (summary.latency_intended or {}).get("latency_ms") or {}
    verdict = partial(
        Probe, rate=rate, p50=lat.get("p50"), p99=lat.get("p99"),
        p99_intended=intended.get("p99"), engine_cpu_pct=cpu, run_dir=run_dir,
    )  # fmt: skip

    reasons = []
    short = achieved is not None and achieved < (1 - PUBLISHER_SHORTFALL) * rate
    if short:
        saturated = (machine.get("saturated_share") or 0) > SATURATED_SHARE_WARN
        offered = f"the broker received {achieved:,.0f} of {rate:,.0f} msg/s"
        if not saturated:
            # the machine had room: the load generator itself could not go faster
            reason = f"{offered}: the load generator, not the stage, is the bottleneck here"
            return verdict(
                sustainable=False, reasons=(reason,), publisher_bound=True,
                bottleneck=_limited(usage, publisher_bound=True),
            )  # fmt: skip
        # all cores busy: the job starved the publisher, which is the stage's overload
        reasons.append(f"{offered} on a saturated machine")
    steady = summary.steady_state
    span_s = _measured_s(summary)
    # an undetermined trend (its interval spans the tolerance) is judged by its point
    # estimate against the same limits: a probe's period is short, and a wide interval
    # must not pass an overloaded probe
    direction = steady and steady["verdict"]
    if steady and direction == "undetermined":
        direction = "rising" if steady["slope_ms_per_min"] > 0 else "falling"
    if steady is None:
        reasons.append("too few measured seconds with outputs to judge the trend")
    elif direction == "rising" and -_fall_ms(steady, span_s) > min(
        GROWING * (lat.get("p50") or 0), GROWING_CAP_MS
    ):
        reasons.append(f"latency rising {steady['slope_ms_per_min']:+,.0f} ms/min")
    elif direction == "falling" and (start := _start_ms(steady, span_s)) > criteria.max_p50_ms:
        reasons.append(
            f"catching up a backlog: latency falling {steady['slope_ms_per_min']:+,.0f} ms/min"
            f" from {start / 1000:,.1f} s"
        )
    if (p50 := lat.get("p50")) is not None and p50 > criteria.max_p50_ms:
        reasons.append(f"p50 {p50:,.0f} ms above {criteria.max_p50_ms:,.0f} ms")
    for name, bound in criteria.slo_ms.items():
        value = lat.get(name)
        if value is None or value > bound:
            shown = "none" if value is None else f"{value:,.0f} ms"
            reasons.append(f"{name.replace('_', '.')} {shown} misses the target {bound:,.0f} ms")
    marks = meta.get("marks_ms") or {}
    drain_ms = summary.throughput.drain_ms
    if "drained_ms" not in marks:
        reasons.append("the job did not drain after the input stopped")
    elif drain_ms is not None and drain_ms / 1000 > criteria.max_drain_s:
        # broker time: the last output's timestamp minus the last input's
        reasons.append(f"drained {drain_ms / 1000:.1f} s after the input stopped")
    missing = summary.records.missing
    if missing:
        reasons.append(f"{missing:,} outputs missing")
    if summary.trusted is False:
        reasons.append("outputs contradict their inputs (not trusted)")
    if (
        criteria.max_engine_cpu_pct is not None
        and cpu_share is not None
        and cpu_share > criteria.max_engine_cpu_pct
    ):
        reasons.append(
            f"engine CPU {cpu_share:.0f} % of the machine, above {criteria.max_engine_cpu_pct:g} %"
        )
    return verdict(sustainable=not reasons, reasons=tuple(reasons), bottleneck=_limited(usage))


def _limited(usage: dict[str, Any], publisher_bound: bool = False) -> dict[str, Any] | None:
    """What limited the probe (:func:`stagebench.capacity.bottleneck.name`), as its record
    holds it."""
    found = bottleneck.name(usage, publisher_bound)
    return None if found is None else found.as_dict()


def _measured_s(summary: Summary) -> float:
    """The measured period's length, s: the time the trend spans. Not the count of seconds
    with outputs (``steady_state.seconds``): near overload a micro-batch writes every ~7 s,
    so a 30 s period holds about 5 such seconds, and a rise counted over them is a fifth of
    the rise over the period."""
    period = summary.period
    return (period.measured_to_ms - period.measured_from_ms) / 1000


def _fall_ms(steady: dict[str, Any], span_s: float) -> float:
    """How far the latency trend fell over the measured period, ms (negative: rose)."""
    slope: float = steady["slope_ms_per_min"]
    return -slope * span_s / 60


def _start_ms(steady: dict[str, Any], span_s: float) -> float:
    """Where the latency trend began the measured period, ms: the per-second median plus
    half the fall. A falling probe is held to be catching up a backlog when it began above
    the p50 limit: its median passed only because the job was draining what piled up
    before. A fall from below the limit is a job still warming up, which says nothing
    against the rate (docs/capacity.md#the-search)."""
    median: float = steady["median_ms"]
    return median + _fall_ms(steady, span_s) / 2
