"""Sustainable throughput: the highest constant rate a stage keeps up with.

A capacity search runs constant-rate probes, each a complete run
(:func:`stagebench.runner.execute`), and judges each one from its summary
(:func:`judge`). :func:`search` grows the rate geometrically from the first
probe until one is not sustainable, bisects the bracket until its width is
within the precision, then spends its last probes at the current estimate of
the capacity. Every probe is one observation, a pass or a failure, whatever its
verdict: near capacity a rate passes some of the time, and :func:`fit_pass`
fits the probability of passing against the rate over all of them, which gives
the capacity (the rate passed half the time) with a 95 % interval. A probe the
publisher could not feed is repeated and, twice, ends the search (the
bottleneck is then the load generator, not the stage); the budget or Ctrl-C
end it with the probes so far.
The search and the fit are pure: the probe is a function, so both are unit-tested
with fakes.
"""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ground.config import require
from ground.errors import StagebenchError
from stagebench.resources import SATURATED_SHARE_WARN

PROBE_DRAIN_GRACE_S = 10.0
"""A probe waits ``--max-drain`` plus this for its job to drain (a latency run waits
60 s): the drain is seen within a few seconds of happening (two empty micro-batches),
and a job still busy beyond that has failed the drain criterion already. An overloaded
probe at 32,000 msg/s spent 60 s waiting."""
PUBLISHER_SHORTFALL = 0.05
"""A probe whose broker received less than 95 % of its rate over the measured period was
not offered that rate: on a machine with idle cores the publisher is the bottleneck
(publisher-bound), on a saturated one the job starved it (unsustainable)."""
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
    span_s = _measured_s(summary)
    # an undetermined trend (its interval spans the tolerance) is judged by its point
    # estimate against the same limits: a probe's period is short, and a wide interval
    # must not pass an overloaded probe
    direction = steady and steady["verdict"]
    if direction == "undetermined":
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
    return Probe(sustainable=not reasons, reasons=tuple(reasons), **common)


def _measured_s(summary: dict[str, Any]) -> float:
    """The measured period's length, s: the time the trend spans. Not the count of seconds
    with outputs (``steady_state.seconds``): near overload a micro-batch writes every ~7 s,
    so a 30 s period holds about 5 such seconds, and a rise counted over them is a fifth of
    the rise over the period."""
    period = summary["period"]
    return (period["measured_to_ms"] - period["measured_from_ms"]) / 1000


def _fall_ms(steady: dict[str, Any], span_s: float) -> float:
    """How far the latency trend fell over the measured period, ms (negative: rose)."""
    return -steady["slope_ms_per_min"] * span_s / 60


def _start_ms(steady: dict[str, Any], span_s: float) -> float:
    """Where the latency trend began the measured period, ms: the per-second median plus
    half the fall. A falling probe is held to be catching up a backlog when it began above
    the p50 limit: its median passed only because the job was draining what piled up
    before (one search found 32,000 msg/s "sustainable" at a p50 of 9.1 s falling 33 s/min,
    from about 17 s). A fall from below the limit is a job still warming up, which says
    nothing against the rate: parse at 32,000 msg/s fell 0.5 s from 0.9 s and drained in
    0.8 s; a rule on the fall's share of the median (half) rejected it."""
    return steady["median_ms"] + _fall_ms(steady, span_s) / 2


REFINE_PROBES = 4
"""Probes a search spends, after bisecting to its precision, at the capacity's current
estimate. For a logistic curve the probes that narrow the interval of its 0.5 rate most
are at that rate (the c-optimal design for a median effective dose puts them all there),
and each estimate uses every probe before it. In 200 simulated searches each, four
narrowed the 95 % interval from 33 to 20 % of the rate (verdicts a toss-up over ±10 %)
and from 32 to 18 % (deterministic verdicts), for four probes more than the eight
before them."""
PASS_HALF_WIDTH = (0.02, 0.30)
"""How gradually a stage stops keeping up, as the prior of :func:`fit_pass` has it: the
capacity is 1 + h times the rate passed 90 % of the time, h log-uniform between these.
Two searches of one stage on a 2-core machine differed by 6–19 %, so verdicts are a
toss-up over some per cent of the rate; over more than 30 % a stage would have no
capacity a dozen probes could place. The bounds are what keeps the posterior proper when
every pass lies below every failure, which a bisection makes so whatever the stage does.
Below 2 %: a dozen probes cannot tell so sharp a curve from a step, and a prior reaching
down to 0.1 % leaned on steep curves: in simulated pairs of searches of a stage whose
verdicts are a toss-up over ±10 %, each one's interval held the other's estimate in 68 %
of pairs, against 82 % from 2 %."""
_LN9 = math.log(9)
_SLOPES = _LN9 / np.log1p(np.geomspace(*PASS_HALF_WIDTH, 17))
"""The prior's slopes, logit per unit of ln rate, equally weighted: log-uniform in h."""
_GRID = 200
"""Points of ln capacity over the span where the posterior has its mass. With 17 slopes,
the estimates and bounds are within 1 % of a grid of 300 × 25."""
_QUANTILES = (0.025, 0.5, 0.975)


@dataclass(frozen=True)
class PassFit:
    """The probability that a probe passes, against its rate: logit P(pass) = intercept +
    slope · ln(rate in msg/s), slope < 0.

    ``capacity_mps`` is the rate passed half the time, ``pass90_mps`` the rate passed 90 %
    of the time, each the posterior median with its 95 % interval (the 2.5 and 97.5 %
    quantiles). ``intercept`` and ``slope`` are the curve through the posterior medians of
    the capacity and of the slope, so -intercept / slope is ln ``capacity_mps``."""

    capacity_mps: float
    capacity_ci95_mps: tuple[float, float]
    pass90_mps: float
    pass90_ci95_mps: tuple[float, float]
    intercept: float
    slope: float
    probes: int


def fit_pass(rates: Sequence[float], passed: Sequence[bool]) -> PassFit | None:
    """Bayesian logistic regression of a probe's pass on ln of its rate, over every probe;
    None without both a pass and a failure (the capacity then lies beyond the probes).

    Why a posterior: the search bisects, and bisection keeps every pass below every
    failure whatever the stage does (complete separation). The likelihood alone then
    always prefers a step at the bracket (an infinite slope): intervals drawn from it
    (Wald, profile likelihood) shrink with the bracket instead of with the evidence, and a
    parametric bootstrap from that step never varies. Firth's penalty keeps the slope
    finite but favours flat curves so much that its profile interval spans several-fold
    with a dozen probes. The posterior weighs every slope the probes leave possible, within
    :data:`PASS_HALF_WIDTH`, and it does not depend on where the search chose to probe.
    With a flat prior on ln capacity over the probed rates widened by 30 % either side, it
    is computed on a grid (ln capacity × 17 slopes), with no sampler or optimiser to
    converge. In 200 simulated searches each (:func:`search` from 1,000 msg/s at a
    precision of 0.10, with a logistic truth) the 95 % interval held the capacity in
    100 % of them for deterministic verdicts and for verdicts a toss-up over ±4.5 % of
    the rate, 97 % over ±10 % and 90 % over ±20 %; its median width was 20–23 % of the
    rate.
    """
    x = np.log(np.asarray(rates, np.float64))
    y = np.asarray(passed, bool)
    if y.all() or not y.any():
        return None
    theta, weights = _posterior(x, y)
    capacity = np.exp(_quantiles(theta, weights.sum(axis=1)))
    pass90 = np.exp(_quantiles(theta[:, None] - _LN9 / _SLOPES, weights))
    slope = float(_quantiles(_SLOPES, weights.sum(axis=0))[1])
    return PassFit(
        capacity_mps=float(capacity[1]),
        capacity_ci95_mps=(float(capacity[0]), float(capacity[2])),
        pass90_mps=float(pass90[1]),
        pass90_ci95_mps=(float(pass90[0]), float(pass90[2])),
        intercept=slope * math.log(capacity[1]),
        slope=-slope,
        probes=int(y.size),
    )


def pass_band(rates: Sequence[float], passed: Sequence[bool], at: Sequence[float]) -> np.ndarray:
    """The posterior's 2.5, 50 and 97.5 % quantiles (rows) of the probability of passing at
    each rate of ``at`` (columns), from probes with both a pass and a failure: the curve a
    plot draws. Its median crosses 0.5 at ``capacity_mps`` and 0.9 at ``pass90_mps``."""
    theta, weights = _posterior(np.log(np.asarray(rates, np.float64)), np.asarray(passed, bool))
    columns = [
        _quantiles(np.exp(-_softplus(-_SLOPES * (theta[:, None] - x))), weights)
        for x in np.log(np.asarray(at, np.float64))
    ]
    return np.array(columns).T


def _posterior(x: np.ndarray, passed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The posterior on a grid, as weights summing to 1: ln capacity (rows, returned) ×
    :data:`_SLOPES` (columns). A coarse pass over the prior's span finds where the mass is
    and the grid then covers that span finely; the coarse pass holds the probed rates and
    the middles between them, so a gap between a pass and a failure narrower than its step
    is not missed."""
    sign = np.where(passed, 1.0, -1.0)
    probed = np.unique(x)
    reach = math.log1p(PASS_HALF_WIDTH[1])
    span = np.linspace(probed[0] - reach, probed[-1] + reach, 100)
    coarse = np.unique(np.concatenate([span, probed, (probed[1:] + probed[:-1]) / 2]))
    mass = _likelihood(coarse, x, sign).sum(axis=1)
    held = np.flatnonzero(mass > 1e-9 * mass.max())
    lo, hi = coarse[max(held[0] - 1, 0)], coarse[min(held[-1] + 1, coarse.size - 1)]
    theta = np.unique(
        np.concatenate([np.linspace(lo, hi, _GRID), probed[(probed > lo) & (probed < hi)]])
    )
    step = np.diff(theta)
    width = np.concatenate([step, [0.0]]) / 2 + np.concatenate([[0.0], step]) / 2  # trapezoid
    weights = _likelihood(theta, x, sign) * width[:, None]
    return theta, weights / weights.sum()


def _likelihood(theta: np.ndarray, x: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """The probes' likelihood, relative to its largest value, at each ln capacity θ (rows)
    and slope b (columns): a probe at ln rate x passes with probability 1 / (1 + e^(-b(θ-x)))."""
    margin = (theta[:, None] - x) * sign
    log_l = -_softplus(-_SLOPES[:, None] * margin[:, None, :]).sum(axis=2)
    return np.exp(log_l - log_l.max())


def _softplus(v: np.ndarray) -> np.ndarray:
    """ln(1 + e^v) without overflow (twice as fast as ``np.logaddexp(0, v)``)."""
    return np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0.0)


def _quantiles(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The 2.5, 50 and 97.5 % quantiles of ``values`` under ``weights`` (same shape),
    interpolated between values placed at the middle of their weight. Marginalise first:
    repeated values (a grid's rows or columns) would make steps."""
    order = np.argsort(values, axis=None)
    v, w = values.ravel()[order], weights.ravel()[order]
    cdf = (np.cumsum(w) - w / 2) / w.sum()
    return np.interp(_QUANTILES, cdf, v)


@dataclass
class SearchResult:
    """Every probe run, in order, and what they establish.

    ``sustainable_mps`` and ``first_unsustainable_mps``: the bracket the search narrowed,
    the highest rate found sustainable below the lowest found unsustainable, each by one
    probe. The capacity is :attr:`fit`'s, from every probe.
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

    @property
    def fit(self) -> PassFit | None:
        """The pass curve over every probe the publisher fed (the others say nothing about
        the stage)."""
        fed = [p for p in self.probes if not p.publisher_bound]
        return fit_pass([p.rate for p in fed], [p.sustainable for p in fed])


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
    refine: int = REFINE_PROBES,
) -> SearchResult:
    """Bracket the capacity within ``precision`` (relative width, e.g. 0.10), then spend
    ``refine`` probes where the fit puts it.

    ``probe(rate)`` runs one probe. Rates grow by ``growth`` from ``start`` (at most
    ``max_rate``) until a probe fails, and fall by it (down to ``min_rate``) when the
    first one fails; then the bracket is bisected geometrically, and the last ``refine``
    probes go to the capacity :func:`fit_pass` estimates from every probe before each
    (:data:`REFINE_PROBES`); one inside the bracket narrows it. Every verdict counts once,
    a pass or a failure: noise near capacity is what the fit is for, and repeating only
    one kind of verdict would lean the answer towards the other. A probe the publisher
    could not feed is run again, and twice ends the search (``publisher_limit_mps``).
    Before each probe the budget must leave room for one more probe as long as the longest
    so far. Ctrl-C (KeyboardInterrupt) ends the search with ``stopped="interrupted"``, a
    probe that cannot run (StagebenchError) with ``stopped="error: …"``; the probes so far
    are kept.
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

    def passes(rate: float) -> bool:
        """One probe's verdict. A probe the publisher could not feed is run again, and twice
        ends the search: no higher rate can be offered here."""
        verdict = run(rate)
        if verdict.publisher_bound:
            verdict = run(rate)
            if verdict.publisher_bound:
                result.publisher_limit_mps = rate
                raise _Stop("publisher-bound")
        return verdict.sustainable

    try:
        rate = start
        if passes(rate):
            result.sustainable_mps = rate
            while rate < max_rate:
                rate = min(rate * growth, max_rate)
                if not passes(rate):
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
                if passes(rate):
                    result.sustainable_mps = rate
                    break
                result.first_unsustainable_mps = rate
        while result.bracket_width > precision:
            lo, hi = result.sustainable_mps, result.first_unsustainable_mps
            mid = _round_rate(math.sqrt(lo * hi))
            if not lo < mid < hi:  # three digits are too few for this precision
                mid = math.sqrt(lo * hi)
            if passes(mid):
                result.sustainable_mps = mid
            else:
                result.first_unsustainable_mps = mid
        for _ in range(refine):
            rate = min(max(_round_rate(result.fit.capacity_mps), min_rate), max_rate)
            sustainable = passes(rate)
            if result.sustainable_mps < rate < result.first_unsustainable_mps:
                if sustainable:
                    result.sustainable_mps = rate
                else:
                    result.first_unsustainable_mps = rate
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
