"""The capacity search on fake probes with known answers, the pass curve fitted to its
probes, and the verdict on run summaries."""

import io
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from evaluator.model.result import Summary
from ground.errors import BrokerError, ConfigError
from stagebench.capacity import measure
from stagebench.capacity.fit import fit_pass
from stagebench.capacity.markdown import _application_line, markdown
from stagebench.capacity.probe import Criteria, Probe, judge, parse_slo
from stagebench.capacity.search import REFINE_PROBES, parse_budget, search
from stagebench.capacity.table import format_table, headline
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from tests.evaluator.summaries import made_summary
from tests.stagebench.capacity.records import record


def fake(capacity: float, publisher_max: float = float("inf")):
    """A probe sustainable up to ``capacity``."""
    calls: list[float] = []

    def probe(rate: float) -> Probe:
        calls.append(rate)
        if rate > publisher_max:
            return Probe(rate, False, ("publisher behind",), publisher_bound=True, seconds=60)
        ok = rate <= capacity
        return Probe(rate, ok, () if ok else ("rising",), seconds=60)

    return probe, calls


def logistic(capacity: float, slope: float, rng: np.random.Generator):
    """A probe that passes with probability 1 / (1 + (rate / capacity)^slope): half the
    time at ``capacity``."""

    def probe(rate: float) -> Probe:
        ok = bool(rng.random() < 1 / (1 + math.exp(slope * math.log(rate / capacity))))
        return Probe(rate, ok, () if ok else ("rising",), seconds=60)

    return probe


def test_grows_bisects_to_the_precision_then_probes_at_the_estimate():
    probe, calls = fake(capacity=5750)
    result = search(probe, start=500, max_rate=100_000, precision=0.10)
    assert result.stopped == "converged"
    assert result.sustainable_mps <= 5750 < result.first_unsustainable_mps
    assert result.bracket_width <= 0.10
    # 8000 relied on at once, as 4000's pass was; then sqrt(4000 * 8000) and on
    assert calls[:6] == [500, 1000, 2000, 4000, 8000, 5660]
    assert len(calls) == len(set(calls[:-REFINE_PROBES])) + REFINE_PROBES
    fit = result.fit
    assert fit.capacity_ci95_mps[0] < 5750 < fit.capacity_ci95_mps[1]
    assert fit.capacity_mps == pytest.approx(5750, rel=0.01)


def test_the_growth_factor_sets_the_rates_before_the_bisection():
    probe, calls = fake(capacity=5750)
    result = search(probe, start=3000, max_rate=100_000, precision=0.10, growth=1.5)
    assert calls[:4] == [3000, 4500, 6750, 5510]  # then sqrt(4500 * 6750)
    assert result.stopped == "converged" and result.bracket_width <= 0.10
    assert result.sustainable_mps <= 5750 < result.first_unsustainable_mps


def test_the_last_probes_go_where_the_fit_puts_the_capacity_so_far():
    probe = logistic(5000, 23, np.random.default_rng(7))
    result = search(probe, start=500, max_rate=100_000, precision=0.10)
    rates = [p.rate for p in result.probes]
    passed = [p.sustainable for p in result.probes]
    first = len(rates) - REFINE_PROBES
    for k in range(first, len(rates)):
        estimate = fit_pass(rates[:k], passed[:k]).capacity_mps
        assert rates[k] == float(f"{estimate:.3g}")  # three significant digits
    assert first >= 6  # growth and bisection came first


@pytest.mark.parametrize("chance", [0.3, 0.7])
def test_passes_and_failures_are_judged_by_the_same_rule(chance):
    """A rate passed with probability ``chance`` is taken as sustainable that often: one
    probe, one verdict, whichever it is."""
    rng = np.random.default_rng(3)

    def probe(rate: float) -> Probe:
        ok = rate <= 1000 or (rate == 2000 and bool(rng.random() < chance))
        return Probe(rate, ok, seconds=1)

    runs = [search(probe, 1000, 4000, precision=0.9, refine=0) for _ in range(1000)]
    held = np.mean([r.sustainable_mps >= 2000 for r in runs])
    assert abs(held - chance) < 0.05
    assert all(sum(p.rate == 2000 for p in r.probes) == 1 for r in runs)


def test_a_first_probe_above_capacity_searches_downwards():
    probe, _ = fake(capacity=300)
    result = search(probe, start=1000, max_rate=100_000, precision=0.10)
    assert result.sustainable_mps <= 300 < result.first_unsustainable_mps
    assert result.bracket_width <= 0.10


def test_nothing_sustainable_and_the_max_rate():
    probe, _ = fake(capacity=0.1)
    assert search(probe, start=4, max_rate=100, min_rate=1).stopped == "nothing-sustainable"
    probe, calls = fake(capacity=1e9)
    result = search(probe, start=500, max_rate=3000)
    assert result.stopped == "max-rate" and result.sustainable_mps == 3000
    assert calls == [500, 1000, 2000, 3000]


def test_the_budget_ends_the_search_with_the_bracket_so_far():
    now = [0.0]

    def probe(rate: float) -> Probe:
        now[0] += 60  # each probe takes a minute of the fake clock
        return Probe(rate, rate <= 5750)

    result = search(probe, 500, 100_000, budget_s=300, clock=lambda: now[0])
    # 500, 1000, 2000, 4000 fit in 300 s with a minute to spare; 8000 would end at 300 s
    # and is run (240 + 60 is not over 300), the bisection's first probe would not fit
    assert result.stopped == "budget"
    assert [p.rate for p in result.probes] == [500, 1000, 2000, 4000, 8000]
    assert (result.sustainable_mps, result.first_unsustainable_mps) == (4000, 8000)
    # the fit says what five probes can: between them, and not where
    assert result.fit.capacity_ci95_mps == pytest.approx((4000, 8000), rel=0.05)


def test_a_publisher_that_cannot_keep_up_twice_ends_the_search_without_blaming_the_stage():
    probe, calls = fake(capacity=50_000, publisher_max=3000)
    result = search(probe, 500, 100_000)
    assert result.stopped == "publisher-bound" and result.publisher_limit_mps == 4000
    assert calls == [500, 1000, 2000, 4000, 4000]  # confirmed before the search stops
    assert result.sustainable_mps == 2000 and result.first_unsustainable_mps is None
    assert result.probes[-1].verdict == "publisher-bound"


def test_a_publisher_bound_probe_that_passes_its_confirmation_counts_as_sustainable():
    flaky_publisher = iter([True, False])

    def probe(rate):
        if rate == 1000 and next(flaky_publisher, False):
            return Probe(rate, False, ("behind",), publisher_bound=True)
        return Probe(rate, rate <= 1500)

    result = search(probe, 500, 100_000, precision=0.2)
    assert result.stopped == "converged" and 1000 <= result.sustainable_mps <= 1500


def test_a_precision_finer_than_three_digits_still_converges():
    probe, _ = fake(capacity=1003.7)
    result = search(probe, 500, 4000, precision=0.001)
    assert result.stopped == "converged" and result.bracket_width <= 0.001
    assert result.sustainable_mps <= 1003.7 < result.first_unsustainable_mps


def test_a_probe_that_cannot_run_ends_the_search_with_the_probes_so_far():
    def probe(rate):
        if rate > 1000:
            raise BrokerError("Kafka at 127.0.0.1:1 stopped answering")
        return Probe(rate, True)

    result = search(probe, 500, 100_000)
    assert result.stopped == "error: Kafka at 127.0.0.1:1 stopped answering"
    assert [p.rate for p in result.probes] == [500, 1000]


def test_ctrl_c_keeps_the_finished_probes():
    def probe(rate):
        if rate > 1000:
            raise KeyboardInterrupt
        return Probe(rate, True, seconds=1)

    result = search(probe, 500, 100_000)
    assert result.stopped == "interrupted" and [p.rate for p in result.probes] == [500, 1000]


@pytest.mark.parametrize(
    ("start", "max_rate", "precision"), [(0, 10, 0.1), (-5, 10, 0.1), (100, 50, 0.1),
                                         (100, 500, 0), (100, 500, 1.0)],
)  # fmt: skip
def test_bad_search_settings_are_refused(start, max_rate, precision):
    with pytest.raises(ConfigError):
        search(lambda r: Probe(r, True), start, max_rate, precision)


def test_budget_text():
    assert parse_budget("30m") == 1800 and parse_budget("1h") == 3600
    assert parse_budget("90") == 90 and parse_budget("45s") == 45
    for bad in ("", "m", "-3m", "soon"):
        with pytest.raises(ValueError, match=f"such as 30m, 1h, 90s or 900 .*got {bad!r}"):
            parse_budget(bad)


def _summary(**over) -> Summary:
    base = {
        "latency_ms": {"p50": 120.0, "p99": 300.0},
        "records": {"missing": 0},
        "steady_state": {"verdict": "steady", "slope_ms_per_min": 3.0},
        "trusted": True,
        "machine": {"cores": 2},
        "throughput": {"drain_ms": 1500, "input_mps": 1000.0},
        "period": {"measured_from_ms": 1_000_000, "measured_to_ms": 1_030_000},
        "metadata": {
            "marks_ms": {"drained_ms": 12_000},
            "resources": {"engine": {"cpu_percent_mean": 130.0}},
        },
    }
    return made_summary(**{**base, **over})


def test_judge_a_steady_probe_and_each_reason():
    ok = judge(1000, _summary(), Criteria(), run_dir="r")
    assert ok.sustainable and ok.engine_cpu_pct == 130.0 and ok.run_dir == "r"
    assert ok.p99_intended is None  # a summary without latency_intended
    behind = _summary(latency_intended={"latency_ms": {"p99": 2_300.0}})
    assert judge(1000, behind, Criteria()).p99_intended == 2_300.0
    up = {"verdict": "rising", "slope_ms_per_min": 900.0, "seconds": 30}
    rising = judge(1000, _summary(steady_state=up), Criteria())
    assert not rising.sustainable and "rising +900 ms/min" in rising.reasons[0]
    # a rise of 1.5 s over the period counts even on a p50 of 9 s (a 5 % overload) ...
    overloaded = {"verdict": "rising", "slope_ms_per_min": 3_000.0, "seconds": 30}
    slow = _summary(latency_ms={"p50": 9_000.0, "p99": 12_000.0}, steady_state=overloaded)
    assert not judge(1000, slow, Criteria()).sustainable
    # an undetermined trend is judged by its point estimate: the same rise fails
    unsure = {**overloaded, "verdict": "undetermined"}
    slow = _summary(latency_ms={"p50": 9_000.0, "p99": 12_000.0}, steady_state=unsure)
    assert "rising +3,000 ms/min" in judge(1000, slow, Criteria()).reasons[0]
    # ... a significant drift of 90 ms on a p50 of 425 ms does not
    drift = {"verdict": "rising", "slope_ms_per_min": 180.0, "seconds": 30}
    drifting = _summary(latency_ms={"p50": 425.0, "p99": 778.0}, steady_state=drift)
    assert judge(1000, drifting, Criteria()).sustainable
    # a job draining a backlog: falling 16.5 s over the period from about 17 s, above the
    # p50 limit, though its median (9.1 s) is under it
    down = {"verdict": "falling", "slope_ms_per_min": -33_000.0, "seconds": 30,
            "median_ms": 9_100.0}  # fmt: skip
    backlog = _summary(latency_ms={"p50": 9_100.0, "p99": 14_000.0}, steady_state=down)
    draining = judge(1000, backlog, Criteria())
    assert draining.reasons == (
        "catching up a backlog: latency falling -33,000 ms/min from 17.4 s",
    )
    # the same fall judged against a limit of 20 s: it began below it
    assert judge(1000, backlog, Criteria(max_p50_ms=20_000)).sustainable
    # a job still warming up is not held against it, however large the fall's share of its
    # median: parse at 32,000 msg/s fell 0.53 s on a p50 of 0.68 s
    for slope, median in ((-210.0, 347.0), (-1_065.0, 675.0)):
        warming = {"verdict": "falling", "slope_ms_per_min": slope, "seconds": 30,
                   "median_ms": median}  # fmt: skip
        warm = _summary(latency_ms={"p50": median, "p99": 1_100.0}, steady_state=warming)
        assert judge(1000, warm, Criteria()).sustainable
    slow = judge(1000, _summary(latency_ms={"p50": 12_000.0, "p99": 20_000.0}), Criteria())
    assert "above 10,000 ms" in slow.reasons[0]
    meta = _summary().metadata
    late = judge(1000, _summary(throughput={"drain_ms": 15_000, "input_mps": 1000}), Criteria())
    assert late.reasons == ("drained 15.0 s after the input stopped",)
    stuck = judge(1000, _summary(metadata={**meta, "marks_ms": {}}), Criteria())
    assert "did not drain" in stuck.reasons[0]
    lossy = judge(1000, _summary(records={"missing": 7}), Criteria())
    assert lossy.reasons == ("7 outputs missing",)
    busy = judge(1000, _summary(), Criteria(max_engine_cpu_pct=50))
    assert "engine CPU 65 %" in busy.reasons[0]


def test_judge_names_the_publisher_as_the_bottleneck_only_with_idle_cores():
    short = {"drain_ms": 1500, "input_mps": 800.0}
    probe = judge(1000, _summary(throughput=short), Criteria())
    assert probe.publisher_bound and probe.verdict == "publisher-bound"
    assert "the load generator, not the stage" in probe.reasons[0]
    # every core busy: the job starved the publisher, which is the stage's overload
    busy = _summary(throughput=short, machine={"cores": 2, "saturated_share": 0.6})
    probe = judge(1000, busy, Criteria())
    assert not probe.publisher_bound and probe.verdict == "unsustainable"
    assert "received 800 of 1,000 msg/s on a saturated machine" in probe.reasons[0]
    # the rate over the measured period counts, not the publisher's whole run: a lead-in
    # at half the rate lowers the latter and says nothing against either
    lead_in = _summary(metadata={**_summary().metadata, "publisher": {"achieved_rate": 800}})
    assert judge(1000, lead_in, Criteria()).sustainable


def test_a_rise_is_counted_over_the_time_the_trend_spans():
    """Near overload a micro-batch writes every ~7 s: 5 seconds with outputs in a 30 s
    period. The rise is the slope over the 30 s (1.5 s, failing), not over 5 s (0.25 s)."""
    sparse = {"verdict": "rising", "slope_ms_per_min": 3_000.0, "seconds": 5}
    slow = _summary(latency_ms={"p50": 9_000.0, "p99": 12_000.0}, steady_state=sparse)
    assert judge(1000, slow, Criteria()).reasons == ("latency rising +3,000 ms/min",)
    # the same slope over a 10 s period raises the latency 0.5 s: drift
    short = {"measured_from_ms": 1_000_000, "measured_to_ms": 1_010_000}
    slow = _summary(latency_ms={"p50": 9_000.0, "p99": 12_000.0}, steady_state=sparse, period=short)
    assert judge(1000, slow, Criteria()).sustainable
    # and where a falling trend began: 9.1 s plus half of 16.5 s, whatever the outputs' count
    down = {"verdict": "falling", "slope_ms_per_min": -33_000.0, "seconds": 4,
            "median_ms": 9_100.0}  # fmt: skip
    backlog = _summary(latency_ms={"p50": 9_100.0, "p99": 14_000.0}, steady_state=down)
    assert "from 17.4 s" in judge(1000, backlog, Criteria()).reasons[0]


def test_the_fit_finds_a_known_curve():
    rng = np.random.default_rng(11)
    rates = np.geomspace(4000, 6250, 200)
    slope = math.log(9) / math.log(1.1)  # passed 90 % of the time 10 % below capacity
    passed = rng.random(rates.size) < 1 / (1 + (rates / 5000) ** slope)
    fit = fit_pass(rates, passed)
    low, high = fit.capacity_ci95_mps
    assert low < 5000 < high and high / low < 1.06
    assert abs(fit.capacity_mps / 5000 - 1) < 0.03
    assert abs(fit.pass90_mps / (5000 / 1.1) - 1) < 0.05
    assert fit.pass90_ci95_mps[0] < fit.pass90_mps < fit.pass90_ci95_mps[1]
    assert abs(-fit.slope / slope - 1) < 0.3 and fit.probes == 200
    assert math.exp(-fit.intercept / fit.slope) == pytest.approx(fit.capacity_mps)


def test_the_fit_stays_finite_when_every_pass_lies_below_every_failure():
    """Complete separation, which bisection always leaves: the likelihood alone would put a
    step anywhere in the gap; the posterior gives a finite curve with the capacity in the
    gap and an interval that admits slopes the probes cannot rule out."""
    rates = [500, 1000, 2000, 4000, 2830, 3360, 3670, 3570]
    passed = [True, True, True, False, True, True, False, True]
    fit = fit_pass(rates, passed)
    assert 3570 < fit.capacity_mps < 3670
    low, high = fit.capacity_ci95_mps
    assert 3000 < low < 3570 and 3670 < high < 4400
    assert fit.pass90_mps < fit.capacity_mps and -1000 < fit.slope < 0
    # the same probes in any order, the same answer
    assert fit_pass(rates[::-1], passed[::-1]) == fit


def test_without_both_a_pass_and_a_failure_there_is_no_fit():
    assert fit_pass([500, 1000, 2000], [True] * 3) is None
    assert fit_pass([500], [False]) is None
    result = search(fake(capacity=1e9)[0], start=500, max_rate=3000)
    assert result.stopped == "max-rate" and result.fit is None


def test_the_interval_holds_the_capacity_in_simulated_searches():
    """200 searches of stages whose verdicts are a toss-up within ±10 % of the capacity
    (passed 90 % of the time 10 % below it), each capacity drawn anew."""
    rng = np.random.default_rng(28)
    slope = math.log(9) / math.log(1.1)
    held = 0
    for _ in range(200):
        capacity = 5000 * math.exp(rng.uniform(-0.5, 0.5))
        result = search(logistic(capacity, slope, rng), start=500, max_rate=100_000)
        low, high = result.fit.capacity_ci95_mps
        held += low <= capacity <= high
    assert held >= 0.9 * 200


def _doc(stage: str, capacity: float | None, stopped: str, sustainable: float | None):
    per_core = sustainable / 1.2 if sustainable else None
    interval = [0.9 * capacity, 1.1 * capacity] if capacity else None
    return record(stage=stage, capacity_mps=capacity, capacity_ci95_mps=interval,
                  sustainable_mps=sustainable, sustainable_mps_per_core=per_core,
                  stopped=stopped, seconds=600)  # fmt: skip


def test_the_table_takes_the_capacity_from_searches_with_a_fit():
    table = format_table([
        _doc("join", 5800, "converged", 5660), _doc("join", 6100, "budget", 6000),
        _doc("join", None, "interrupted", 500),  # one probe before Ctrl-C: no fit, no capacity
        _doc("ingest", None, "max-rate", 3670), _doc("ingest", None, "max-rate", 16000),
    ])  # fmt: skip
    join, ingest = table.splitlines()[1:]
    assert join.split()[2] == "5,950" and "4,858" in join
    assert "5,220–6,380, 5,490–6,710" in join
    assert "2 of 3 fitted" in join and "5,800–6,100" in join
    assert "≥ 16,000" in ingest and "0 of 2 fitted" in ingest


def test_capacity_json_and_the_printed_result_say_the_fit(monkeypatch):
    monkeypatch.setattr(measure, "machine", lambda: {"cores": 2})
    monkeypatch.setattr(measure, "versions", lambda **_: {})
    probe, _ = fake(capacity=5750)
    found = search(probe, start=500, max_rate=100_000)
    result = measure.capacity_result(
        "join", "spark", "builtin", found, Criteria(), 1800.0, precision=0.10, growth=2.0,
        out=Path("results/search"), probe={},
    )  # fmt: skip
    doc = result.as_dict()
    fit = found.fit
    assert doc["capacity_mps"] == round(fit.capacity_mps, 1)
    assert doc["capacity_ci95_mps"] == [round(v, 1) for v in fit.capacity_ci95_mps]
    assert doc["pass90_mps"] == round(fit.pass90_mps, 1)
    assert doc["pass_curve"]["slope"] < 0 and doc["pass_curve"]["probes"] == len(found.probes)
    low, high = doc["capacity_ci95_mps"]
    line = headline(result)
    assert line.startswith(f"{doc['capacity_mps']:,.0f} msg/s (95 % interval ")
    assert f"{low:,.0f}–{high:,.0f}" in line and "bracketed within 10%" in line
    assert f"passed 90 % of the time at {doc['pass90_mps']:,.0f} msg/s" in line
    assert "logit P(pass) = " in markdown(result)


def test_the_report_says_whether_the_probes_shared_an_application():
    shared = {"stages": ["join/builtin"], "rate": 8000.0, "seconds": 40.0, "alone_mps": []}
    line = _application_line(shared)
    assert "one Spark application, warmed up first by join/builtin alone at 8,000 msg/s" in line
    assert line.endswith("for 40 s, not measured.")
    line = _application_line({**shared, "alone_mps": [16_000.0, 12_000.0]})
    assert "the probes at 16,000, 12,000 msg/s had jobs of their own" in line
    assert _application_line(None) == "Each probe started a job of its own."


def test_a_probe_after_the_shared_application_stopped_is_named_as_alone(monkeypatch):
    # a query that would not stop stops the application: the probes after it are jobs
    # of their own, and the search says which
    summaries = iter([made_summary(warmup={"application": {"shared": True, "age_s": 60.0}}),
                      made_summary(warmup={"application": {"shared": False}})])  # fmt: skip
    given = []

    def execute(run, settings, console, application):
        given.append((run.rate, application))
        return SimpleNamespace(summary=next(summaries), run_dir=Path("results/r"))

    monkeypatch.setattr(measure, "execute", execute)
    monkeypatch.setattr(
        measure, "judge", lambda rate, summary, criteria, run_dir: Probe(rate, True)
    )
    application = object()
    prober = measure._Prober(RunConfig(stage="join"), None, Criteria(), Console(io.StringIO()),
                             application)  # fmt: skip
    assert prober(1000.0).sustainable and prober(2000.0).sustainable
    assert given == [(1000.0, application), (2000.0, application)]
    assert prober.alone == [2000.0]


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("p99=1s", ("p99", 1000.0)),
        ("p50 = 250ms", ("p50", 250.0)),
        ("p99.9=2.5s", ("p99_9", 2500.0)),
    ],
)
def test_a_latency_target_reads_as_percentile_and_bound(text, parsed):
    assert parse_slo(text) == parsed


@pytest.mark.parametrize("text", ["p99<1s", "p98=1s", "p99=1", "p99=0s", "latency=1s"])
def test_a_latency_target_that_is_none_names_the_form(text):
    with pytest.raises(ConfigError, match=rf"--slo: .*got {re.escape(repr(text))}"):
        parse_slo(text)


def test_a_probe_that_misses_a_latency_target_fails_with_it(monkeypatch):
    slo = Criteria(slo_ms={"p99": 250.0, "p50": 200.0})
    missed = judge(1000, _summary(), slo)  # p50 120, p99 300
    assert not missed.sustainable
    assert missed.reasons == ("p99 300 ms misses the target 250 ms",)
    assert judge(1000, _summary(), Criteria(slo_ms={"p99": 300.0})).sustainable
    # the default keeps today's meaning: no target, the sustainable rate alone
    assert Criteria().slo_ms == {} and judge(1000, _summary(), Criteria()).sustainable
    monkeypatch.setattr(measure, "machine", lambda: {"cores": 2})
    monkeypatch.setattr(measure, "versions", lambda **_: {})
    probe, _ = fake(capacity=5750)
    result = measure.capacity_result(
        "join", "spark", "builtin", search(probe, start=500, max_rate=100_000), slo, 1800.0,
        precision=0.10, growth=2.0, out=Path("results/search"), probe={},
    )  # fmt: skip
    assert result.as_dict()["criteria"]["slo_ms"] == {"p99": 250.0, "p50": 200.0}
    assert headline(result).endswith("; under p99 ≤ 250 ms, p50 ≤ 200 ms")
    assert "and p99 is at most 250 ms, and p50 is at most 200 ms" in markdown(result)
