"""Sustainable throughput: the highest constant rate a stage keeps up with (SPEC §5).

A capacity search runs constant-rate probes, each a complete run
(:func:`stagebench.runner.execute`), and judges each one from its summary
(:func:`judge`). :func:`search` grows the rate geometrically from the first
probe until one is not sustainable, then bisects the bracket until its width
is within the precision. A probe that fails is confirmed once before the
search relies on it (noisy verdicts on a small machine) unless it failed
decisively (a p50 far above the limit), a probe the publisher could not feed
ends the search (the bottleneck is then the load generator, not the stage),
and the budget or Ctrl-C ends it with the bracket found so far.
The search is pure: the probe is a function, so it is unit-tested with fakes.
"""

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ground.config import require
from ground.errors import StagebenchError
from stagebench.resources import SATURATED_SHARE_WARN

PROBE_DURATION_S = 30.0
PROBE_WARMUP_MAX_S = 60.0
PROBE_SETTLE_WINDOW_S = 30.0
"""A probe's measured period, longest warm-up and settle window unless given: an
overloaded probe never settles, so its warm-up would otherwise last the full 180 s of a
latency run."""
PROBE_LEAD_IN_S = 30.0
"""A probe first publishes half its rate this long, then warms up at the rate. A cold job
at the full rate builds a start-up backlog: above capacity its latency was still
falling after a minute (draining that backlog with ever larger micro-batches), and near
capacity whether it caught up by the measured period was chance. After the lead-in a
rate above capacity shows its latency rising, as SPEC §5 defines it."""
PROBE_DEFAULTS: dict[str, float] = {
    "duration_s": PROBE_DURATION_S,
    "lead_in_s": PROBE_LEAD_IN_S,
    "warmup_max_s": PROBE_WARMUP_MAX_S,
    "warmup_min_s": 0.0,  # the lead-in warmed the job up: at the rate, the settle window is enough
    "settle_window_s": PROBE_SETTLE_WINDOW_S,
}
"""A probe's ``[run]`` values unless the config file or the command line give them."""
PROBE_EVALUATOR_DEFAULTS: dict[str, float] = {"read_before_s": 10.0}
"""A probe's ``[evaluator]`` values unless given: ingest and parse probes read their topics
from 10 s before the measured period (:func:`evaluator.evaluation.read_from_ms`). Reading
every record of a probe took 11.3 of a 26.1-minute parse search and 3.7 of the 6.0
minutes of an ingest probe at 96,000 msg/s; the verdict needs only the measured period."""
PROBE_DRAIN_GRACE_S = 10.0
"""A probe waits ``--max-drain`` plus this for its job to drain (a latency run waits
60 s): the drain is seen within a few seconds of happening (two empty micro-batches),
and a job still busy beyond that has failed the drain criterion already. An overloaded
probe at 32,000 msg/s spent 60 s waiting."""
PUBLISHER_SHORTFALL = 0.05
"""A probe whose broker received less than 95 % of its rate over the measured period was
not offered that rate: on a machine with idle cores the publisher is the bottleneck
(publisher-bound), on a saturated one the job starved it (unsustainable)."""
DECISIVE = 2.0
"""A probe whose p50 exceeds the p50 limit this many times over is not repeated: its
failure is no noise. The noisiest failure seen that passed its repeat had 1.6 times
the limit (join at 8,000 msg/s: 16.4 s, then 6.3 s); parse at 60,000 msg/s failed at
2.6 and then 2.4 times it, and a join probe at 32,000 msg/s at 5.4 times: their repeats
cost the searches 4.3 and 4.4 minutes."""
GROWING = 0.5
GROWING_CAP_MS = 1_000.0
"""A rising trend is held against a probe when it raised the latency over the measured
period by more than half its median or by more than 1 s. A rate above capacity by the
search's precision (10 %) raises it by 6 s a minute, 3 s over a 30 s probe; a smaller
rise is drift: two ingest probes at 4,000 msg/s rose 68 and 90 ms on p50s of 325 and
425 ms, significant slopes, while another search found 8,000 and 16,000 msg/s steady."""


@dataclass(frozen=True)
class Criteria:
    """What a sustainable probe must meet, over its measured period."""

    max_p50_ms: float = 10_000.0
    max_drain_s: float = 10.0
    max_engine_cpu_pct: float | None = None
    """Mean engine CPU as a share of all the machine's cores (the papers used 80 %); None:
    reported, not judged."""

    def __post_init__(self) -> None:
        require(self.max_p50_ms > 0, "--max-p50 must be > 0")
        require(self.max_drain_s > 0, "--max-drain must be > 0")
        require(
            self.max_engine_cpu_pct is None or 0 < self.max_engine_cpu_pct <= 100,
            "--max-cpu must be in (0, 100]",
        )


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
    engine_cpu_pct: float | None = None
    """Mean CPU of the Spark job over the measured period, % of one core (150: one and a
    half cores)."""
    run_dir: str | None = None
    seconds: float = 0.0
    decisive: bool = False
    """Failed by so wide a margin (:data:`DECISIVE`) that the search does not repeat it."""

    @property
    def verdict(self) -> str:
        if self.publisher_bound:
            return "publisher-bound"
        return "sustainable" if self.sustainable else "unsustainable"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reasons": list(self.reasons), "verdict": self.verdict}


def judge(
    rate: float, summary: dict[str, Any], criteria: Criteria, run_dir: str | None = None
) -> Probe:
    """The verdict on one probe's run summary (summary.json's document)."""
    meta = summary.get("metadata", {})
    # the measured period's input, by broker time: the lead-in's half rate not counted
    achieved = (summary.get("throughput") or {}).get("input_mps")
    lat = summary["latency_ms"]
    machine = summary.get("machine") or {}
    cores = machine.get("cores") or 1
    engine = (meta.get("resources") or {}).get("engine") or {}
    cpu = engine.get("cpu_percent_mean")
    cpu_share = None if cpu is None else cpu / cores
    common = {
        "rate": rate,
        "p50": lat.get("p50"),
        "p99": lat.get("p99"),
        "engine_cpu_pct": cpu,
        "run_dir": run_dir,
    }
    reasons = []
    short = achieved is not None and achieved < (1 - PUBLISHER_SHORTFALL) * rate
    if short:
        saturated = (machine.get("saturated_share") or 0) > SATURATED_SHARE_WARN
        offered = f"the broker received {achieved:,.0f} of {rate:,.0f} msg/s"
        if not saturated:
            # the machine had room: the load generator itself could not go faster
            reason = f"{offered}: the load generator, not the stage, is the bottleneck here"
            return Probe(sustainable=False, reasons=(reason,), publisher_bound=True, **common)
        # all cores busy: the job starved the publisher, which is the stage's overload
        reasons.append(f"{offered} on a saturated machine")
    steady = summary.get("steady_state")
    if steady is None:
        reasons.append("too few measured seconds with outputs to judge the trend")
    elif steady["verdict"] == "rising" and -_fall_ms(steady) > min(
        GROWING * (lat.get("p50") or 0), GROWING_CAP_MS
    ):
        reasons.append(f"latency rising {steady['slope_ms_per_min']:+,.0f} ms/min")
    elif steady["verdict"] == "falling" and (start := _start_ms(steady)) > criteria.max_p50_ms:
        reasons.append(
            f"catching up a backlog: latency falling {steady['slope_ms_per_min']:+,.0f} ms/min"
            f" from {start / 1000:,.1f} s"
        )
    if lat.get("p50") is not None and lat["p50"] > criteria.max_p50_ms:
        reasons.append(f"p50 {lat['p50']:,.0f} ms above {criteria.max_p50_ms:,.0f} ms")
    marks = meta.get("marks_ms") or {}
    drain_ms = summary.get("throughput", {}).get("drain_ms")
    if "drained_ms" not in marks:
        reasons.append("the job did not drain after the input stopped")
    elif drain_ms is not None and drain_ms / 1000 > criteria.max_drain_s:
        # broker time: the last output's timestamp minus the last input's
        reasons.append(f"drained {drain_ms / 1000:.1f} s after the input stopped")
    missing = summary["records"].get("missing")
    if missing:
        reasons.append(f"{missing:,} outputs missing")
    if summary.get("trusted") is False:
        reasons.append("outputs contradict their inputs (not trusted)")
    if (
        criteria.max_engine_cpu_pct is not None
        and cpu_share is not None
        and cpu_share > criteria.max_engine_cpu_pct
    ):
        reasons.append(
            f"engine CPU {cpu_share:.0f} % of the machine, above {criteria.max_engine_cpu_pct:g} %"
        )
    decisive = lat.get("p50") is not None and lat["p50"] > DECISIVE * criteria.max_p50_ms
    return Probe(sustainable=not reasons, reasons=tuple(reasons), decisive=decisive, **common)


def _fall_ms(steady: dict[str, Any]) -> float:
    """How far the latency trend fell over the measured seconds, ms (negative: rose)."""
    return -steady["slope_ms_per_min"] * steady["seconds"] / 60


def _start_ms(steady: dict[str, Any]) -> float:
    """Where the latency trend began the measured period, ms: the per-second median plus
    half the fall. A falling probe is held to be catching up a backlog when it began above
    the p50 limit: its median passed only because the job was draining what piled up
    before (one search found 32,000 msg/s "sustainable" at a p50 of 9.1 s falling 33 s/min,
    from about 17 s). A fall from below the limit is a job still warming up, which says
    nothing against the rate: parse at 32,000 msg/s fell 0.5 s from 0.9 s and drained in
    0.8 s; a rule on the fall's share of the median (half) rejected it."""
    return steady["median_ms"] + _fall_ms(steady) / 2


@dataclass
class SearchResult:
    """Every probe run, in order, and what they establish.

    ``sustainable_mps``: the highest rate found sustainable; ``first_unsustainable_mps``:
    the lowest rate found (and confirmed) unsustainable; the capacity lies between.
    ``stopped``: converged, max-rate (the highest rate allowed was sustainable),
    publisher-bound, nothing-sustainable, budget, interrupted, or ``error: …`` (a probe
    could not run, e.g. the broker died).
    """

    probes: list[Probe] = field(default_factory=list)
    sustainable_mps: float | None = None
    first_unsustainable_mps: float | None = None
    publisher_limit_mps: float | None = None
    """The rate the publisher could not offer, twice, when ``stopped`` is publisher-bound."""
    stopped: str = "converged"

    @property
    def bracket_width(self) -> float | None:
        lo, hi = self.sustainable_mps, self.first_unsustainable_mps
        return None if lo is None or hi is None else hi / lo - 1


class _Stop(Exception):
    def __init__(self, why: str):
        self.why = why


def search(
    probe: Callable[[float], Probe],
    start: float,
    max_rate: float,
    precision: float = 0.10,
    budget_s: float | None = None,
    growth: float = 2.0,
    min_rate: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
) -> SearchResult:
    """Find the capacity within ``precision`` (relative bracket width, e.g. 0.10).

    ``probe(rate)`` runs one probe. Rates grow by ``growth`` from ``start`` (at most
    ``max_rate``) until a probe fails, and fall by it (down to ``min_rate``) when the
    first one fails; then the bracket is bisected geometrically. A failed probe is run
    a second time and relied on only if it fails again (a decisive failure is relied on
    at once); a rate the publisher could not offer twice ends the search
    (``publisher_limit_mps``). Before each probe the budget must leave room for one
    more probe as long as the longest so far. Ctrl-C (KeyboardInterrupt) ends the search
    with ``stopped="interrupted"``, a probe that cannot run (StagebenchError) with
    ``stopped="error: …"``; the probes so far are kept.
    """
    check_settings(start, max_rate, precision, growth)
    result = SearchResult()
    began = clock()

    def run(rate: float) -> Probe:
        if budget_s is not None and result.probes:
            longest = max(p.seconds for p in result.probes)
            if clock() - began + longest > budget_s:
                raise _Stop("budget")
        t0 = clock()
        try:
            p = probe(rate)
        except KeyboardInterrupt:
            raise _Stop("interrupted") from None
        except StagebenchError as err:
            raise _Stop(f"error: {err}") from None
        if not p.seconds:
            p = Probe(**{**asdict(p), "seconds": clock() - t0})
        result.probes.append(p)
        return p

    def holds(rate: float) -> bool:
        """Sustainable, or failed once (not decisively) and then passed its confirmation.
        Twice publisher-bound ends the search: no higher rate can be offered here."""
        first = run(rate)
        if first.sustainable or first.decisive:
            return first.sustainable
        second = run(rate)
        if first.publisher_bound and second.publisher_bound:
            result.publisher_limit_mps = rate
            raise _Stop("publisher-bound")
        return second.sustainable

    try:
        rate = start
        if holds(rate):
            result.sustainable_mps = rate
            while rate < max_rate:
                rate = min(rate * growth, max_rate)
                if not holds(rate):
                    result.first_unsustainable_mps = rate
                    break
                result.sustainable_mps = rate
            else:
                result.stopped = "max-rate"
                return result
        else:
            result.first_unsustainable_mps = rate
            while True:
                rate = rate / growth
                if rate < min_rate:
                    result.stopped = "nothing-sustainable"
                    return result
                if holds(rate):
                    result.sustainable_mps = rate
                    break
                result.first_unsustainable_mps = rate
        while result.bracket_width > precision:
            lo, hi = result.sustainable_mps, result.first_unsustainable_mps
            mid = _round_rate(math.sqrt(lo * hi))
            if not lo < mid < hi:  # three digits are too few for this precision
                mid = math.sqrt(lo * hi)
            if holds(mid):
                result.sustainable_mps = mid
            else:
                result.first_unsustainable_mps = mid
    except _Stop as stop:
        result.stopped = stop.why
    return result


def check_settings(start: float, max_rate: float, precision: float, growth: float = 2.0) -> None:
    """ConfigError unless 0 < start <= max_rate, 0 < precision < 1 and growth > 1."""
    require(start > 0, f"--from must be > 0 msg/s, got {start:g}")
    require(max_rate >= start, f"--max ({max_rate:g}) must not be below --from ({start:g})")
    require(0 < precision < 1, f"--precision must be in (0, 1), got {precision:g}")
    require(growth > 1, f"--growth must be > 1, got {growth:g}")


def _round_rate(rate: float) -> float:
    """Rates to three significant digits: probes at 4 525.48 msg/s read badly."""
    digits = 2 - math.floor(math.log10(abs(rate)))
    return round(rate, digits)


def parse_budget(text: str) -> float:
    """``30m``, ``1h``, ``90s`` or plain seconds → seconds (ValueError otherwise)."""
    units = {"s": 1, "m": 60, "h": 3600}
    text = text.strip().lower()
    scale = units.get(text[-1:])
    number = text[:-1] if scale else text
    seconds = float(number) * (scale or 1)
    if not seconds > 0:
        raise ValueError(f"budget must be > 0, got {text!r}")
    return seconds
