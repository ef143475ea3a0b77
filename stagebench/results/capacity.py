"""A capacity search's result, as typed, frozen records: :class:`CapacityResult` with its
:class:`Probe` verdicts, built by :func:`stagebench.capacity.measure.capacity_result` from
the search (:class:`stagebench.capacity.search.SearchResult`), written once as
capacity.json (:meth:`CapacityResult.as_dict`) and read back by
:func:`stagebench.results.documents.read_capacity` (:meth:`CapacityResult.from_doc`),
the record every reader takes (its table, report pages, history, reference data).

Each field's ``metadata["doc"]`` says what its key holds: docs/capacity-schema.md is
generated from them (:mod:`stagebench.capacity.schema`).
"""

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from evaluator.model.record import Section, as_dict, from_dict, key_doc

Bounds = list[float]
"""[lo, hi]."""
OPTIONAL_PROBE_KEYS = ("p99_intended", "bottleneck")
"""A probe's keys written only when known."""


@dataclass(frozen=True)
class Probe:
    """One probe's verdict. ``publisher_bound``: the publisher did not keep its schedule,
    so the probe says nothing about the stage."""

    rate: float
    sustainable: bool
    reasons: tuple[str, ...] = ()
    publisher_bound: bool = False
    p50: float | None = None
    p99: float | None = None
    p99_intended: float | None = None
    """The p99 from the inputs' intended send time (``latency_intended``): above ``p99``
    where the publisher fell behind its schedule."""
    engine_cpu_pct: float | None = None
    """Mean CPU of the engine's job over the measured period, % of one core (150: one and a
    half cores)."""
    run_dir: str | None = None
    seconds: float = 0.0
    bottleneck: dict[str, Any] | None = None
    """What limited it (:class:`stagebench.capacity.bottleneck.Bottleneck`); None without
    the run's resource samples."""

    @property
    def verdict(self) -> str:
        if self.publisher_bound:
            return "publisher-bound"
        return "sustainable" if self.sustainable else "unsustainable"

    def as_dict(self) -> dict[str, Any]:
        """The probe in capacity.json: ``p99_intended`` and ``bottleneck`` only when known
        (absent, as in older results, otherwise)."""
        out = {**asdict(self), "reasons": list(self.reasons), "verdict": self.verdict}
        return {k: v for k, v in out.items() if v is not None or k not in OPTIONAL_PROBE_KEYS}


@dataclass(frozen=True)
class CapacityResult:
    """One search of one stage: the capacity the probes' pass curve gives, the bracket
    the search narrowed, every probe, and the conditions."""

    stage: str = field(metadata=key_doc("the stage searched"))
    engine: str | None = field(
        metadata=key_doc(
            "the engine that ran it: spark, flink, kafka-streams (absent in older results: "
            "the stage's own)",
            omit_none=True,
        )
    )
    impl: str = field(
        metadata=key_doc(
            "its implementation: builtin or custom, with an execution mode of the engine's "
            "own after it (builtin@real-time: Spark's real-time mode)"
        )
    )
    capacity_mps: float | None = field(
        metadata=key_doc(
            "the rate a probe passes half the time, on the fitted pass curve (msg/s); null "
            "without both a pass and a failure, as are the next four"
        )
    )
    capacity_ci95_mps: Bounds | None = field(
        metadata=key_doc("its 95 % interval [lo, hi], holding 95 % of the posterior")
    )
    pass90_mps: float | None = field(metadata=key_doc("the rate passed 90 % of the time"))
    pass90_ci95_mps: Bounds | None = field(metadata=key_doc("its 95 % interval [lo, hi]"))
    pass_curve: Section | None = field(
        metadata=key_doc(
            "intercept, slope, probes, prior_half_width: logit P(pass) = intercept + slope · "
            "ln(rate in msg/s), fitted over that many probes; the prior's half-widths "
            "[0.02, 0.3]"
        )
    )
    sustainable_mps: float | None = field(
        metadata=key_doc(
            "the bracket the search narrowed: the highest rate found sustainable below the "
            "lowest found unsustainable (null: none found sustainable)"
        )
    )
    first_unsustainable_mps: float | None = field(
        metadata=key_doc("the lowest rate found unsustainable (null: none)")
    )
    publisher_limit_mps: float | None = field(
        metadata=key_doc("the rate the publisher could not offer, twice (publisher-bound)")
    )
    precision: float = field(metadata=key_doc("the bracket width the search bisects to"))
    bracket_width: float | None = field(
        metadata=key_doc("first_unsustainable_mps / sustainable_mps − 1 (null: no bracket)")
    )
    stopped: str = field(
        metadata=key_doc(
            "why the search ended: converged, max-rate, publisher-bound, nothing-sustainable, "
            'budget, interrupted, or "error: …"'
        )
    )
    engine_cores_used: float | None = field(
        metadata=key_doc("the engine's CPU at the highest sustainable rate, in cores")
    )
    sustainable_mps_per_core: float | None = field(
        metadata=key_doc("the highest sustainable rate per core used")
    )
    bottleneck: Section | None = field(
        metadata=key_doc(
            "sustainable, unsustainable: what limited the highest sustainable probe and the "
            "lowest unsustainable one (null: no such probe or no samples), each resource "
            "(publisher, thread, gc, engine, broker, machine or none: nothing saturated), "
            "process (engine, broker, bench or null) and text (docs/capacity.md"
            "#what-limited-it); absent in older results",
            omit_none=True,
        )
    )
    setting: Section | None = field(
        metadata=key_doc(
            "profile (latency, throughput or tuned) and values (setting → value): the "
            "engine's settings that trade latency for throughput as this search ran them, "
            "written by capacity --tune (docs/capacity.md#the-best-setting)",
            omit_none=True,
        )
    )
    criteria: Section = field(
        metadata=key_doc(
            "max_p50_ms, max_drain_s, max_engine_cpu_pct, slo_ms (percentile → its highest "
            "value in ms, --slo): what a sustainable probe must meet"
        )
    )
    seconds: float = field(metadata=key_doc("how long the search took"))
    probes: list[Probe] = field(
        metadata=key_doc(
            "every probe in order: rate, sustainable, reasons, publisher_bound, p50, p99, "
            "p99_intended (from the inputs' intended send time; above p99 where the "
            "publisher fell behind its schedule; absent when not known), engine_cpu_pct "
            "(% of one core), run_dir (null: the engine's job failed), seconds, bottleneck "
            "(what limited it, as bottleneck's; absent without samples), verdict "
            "(sustainable, unsustainable or publisher-bound)"
        )
    )
    machine: Section = field(metadata=key_doc("the machine the search ran on"))
    versions: dict[str, str | None] = field(metadata=key_doc("the versions it ran with"))
    dir: str = field(metadata=key_doc("the search's directory"))
    growth: float = field(metadata=key_doc("the factor between probes while the rate grew"))
    probe: Section | None = field(
        metadata=key_doc(
            "lead_in_s, warmup_s, warmup_min_s, warmup_max_s, settle_window_s, duration_s, "
            "tail_s, drain_timeout_s: how each probe ran; application: the Spark application "
            "the probes shared, what warmed it up (stages, rate, seconds, took_s, dir) and "
            "alone_mps, the rates whose probe had a job of its own after all (it stops with "
            "a query that would not stop), null when each probe had a job of its own; older "
            "results have none",
            omit_none=True,
        )
    )

    def as_dict(self) -> dict[str, Any]:
        """capacity.json's document."""
        return {**as_dict(self), "probes": [p.as_dict() for p in self.probes]}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> "CapacityResult":
        """The record of a capacity.json document; a key an older one lacks is None."""
        probes = [
            from_dict(Probe, {**p, "reasons": tuple(p.get("reasons") or ())})
            for p in doc.get("probes") or []
        ]
        return replace(from_dict(cls, {**doc, "probes": []}), probes=probes)
