"""The capacity search on fake probes with known answers, and the verdict on run summaries."""

import pytest

from ground.errors import BrokerError, ConfigError
from stagebench.capacity import Criteria, Probe, judge, parse_budget, search
from stagebench.commands.capacity import format_table


def fake(
    capacity: float,
    publisher_max: float = float("inf"),
    flaky: set | None = None,
    decisive_above: float = float("inf"),
):
    """A probe sustainable up to ``capacity``; ``flaky`` rates fail on their first try,
    rates above ``decisive_above`` fail decisively."""
    calls: list[float] = []
    tried: set = set()

    def probe(rate: float) -> Probe:
        calls.append(rate)
        if rate > publisher_max:
            return Probe(rate, False, ("publisher behind",), publisher_bound=True, seconds=60)
        first_try = rate not in tried
        tried.add(rate)
        ok = rate <= capacity and not (flaky and rate in flaky and first_try)
        decisive = not ok and rate > decisive_above
        return Probe(rate, ok, () if ok else ("rising",), seconds=60, decisive=decisive)

    return probe, calls


def test_grows_then_bisects_to_the_precision():
    probe, calls = fake(capacity=5750)
    result = search(probe, start=500, max_rate=100_000, precision=0.10)
    assert result.stopped == "converged"
    assert result.sustainable_mps <= 5750 < result.first_unsustainable_mps
    assert result.bracket_width <= 0.10
    assert calls[:5] == [500, 1000, 2000, 4000, 8000]
    assert calls[5] == 8000  # a failure is confirmed before the search relies on it


def test_the_growth_factor_sets_the_rates_before_the_bisection():
    probe, calls = fake(capacity=5750)
    result = search(probe, start=3000, max_rate=100_000, precision=0.10, growth=1.5)
    assert calls[:5] == [3000, 4500, 6750, 6750, 5510]  # then sqrt(4500 * 6750)
    assert result.stopped == "converged" and result.bracket_width <= 0.10
    assert result.sustainable_mps <= 5750 < result.first_unsustainable_mps


def test_a_decisive_failure_is_not_repeated():
    probe, calls = fake(capacity=5750, decisive_above=7000)
    result = search(probe, start=500, max_rate=100_000, precision=0.10)
    assert calls[:6] == [500, 1000, 2000, 4000, 8000, 5660]  # 8000 relied on at once
    assert result.stopped == "converged" and result.sustainable_mps <= 5750
    assert calls.count(6730) == 2  # a marginal failure is still confirmed


def test_a_noisy_failure_at_a_sustainable_rate_does_not_end_the_growth():
    probe, calls = fake(capacity=5750, flaky={2000})
    result = search(probe, start=500, max_rate=100_000, precision=0.10)
    assert calls[:4] == [500, 1000, 2000, 2000]
    assert result.sustainable_mps >= 4000
    assert [p.sustainable for p in result.probes[2:4]] == [False, True]


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
    # and is run (240 + 60 is not over 300), its confirmation would not fit
    assert result.stopped == "budget"
    assert [p.rate for p in result.probes] == [500, 1000, 2000, 4000, 8000]
    assert (result.sustainable_mps, result.first_unsustainable_mps) == (4000, None)


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
        with pytest.raises(ValueError):
            parse_budget(bad)


def _summary(**over) -> dict:
    base = {
        "latency_ms": {"p50": 120.0, "p99": 300.0},
        "records": {"missing": 0},
        "steady_state": {"verdict": "steady", "slope_ms_per_min": 3.0},
        "trusted": True,
        "machine": {"cores": 2},
        "throughput": {"drain_ms": 1500, "input_mps": 1000.0},
        "metadata": {
            "marks_ms": {"drained_ms": 12_000},
            "resources": {"engine": {"cpu_percent_mean": 130.0}},
        },
    }
    return {**base, **over}


def test_judge_a_steady_probe_and_each_reason():
    ok = judge(1000, _summary(), Criteria(), run_dir="r")
    assert ok.sustainable and ok.engine_cpu_pct == 130.0 and ok.run_dir == "r"
    up = {"verdict": "rising", "slope_ms_per_min": 900.0, "seconds": 30}
    rising = judge(1000, _summary(steady_state=up), Criteria())
    assert not rising.sustainable and "rising +900 ms/min" in rising.reasons[0]
    # a rise of 1.5 s over the period counts even on a p50 of 9 s (a 5 % overload) ...
    overloaded = {"verdict": "rising", "slope_ms_per_min": 3_000.0, "seconds": 30}
    slow = _summary(latency_ms={"p50": 9_000.0, "p99": 12_000.0}, steady_state=overloaded)
    assert not judge(1000, slow, Criteria()).sustainable
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
    assert "above 10,000 ms" in slow.reasons[0] and not slow.decisive
    # twice the limit: the search relies on it without a repeat
    lost = judge(1000, _summary(latency_ms={"p50": 21_000.0, "p99": 40_000.0}), Criteria())
    assert lost.decisive and not lost.sustainable
    assert not judge(1000, _summary(latency_ms={"p50": 19_000.0, "p99": 40_000.0}),
                     Criteria()).decisive  # fmt: skip
    meta = _summary()["metadata"]
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
    lead_in = _summary(metadata={**_summary()["metadata"], "publisher": {"achieved_rate": 800}})
    assert judge(1000, lead_in, Criteria()).sustainable


def _doc(stage: str, found: float | None, stopped: str) -> dict:
    per_core = found / 1.2 if found else None
    return {"stage": stage, "impl": "builtin", "sustainable_mps": found,
            "sustainable_mps_per_core": per_core, "stopped": stopped, "seconds": 600}  # fmt: skip


def test_the_table_takes_the_capacity_from_converged_searches_only():
    table = format_table([
        _doc("join", 5660, "converged"), _doc("join", 6000, "converged"),
        _doc("join", 500, "interrupted"),  # one probe before Ctrl-C: a bound, not a capacity
        _doc("ingest", 3670, "budget"), _doc("ingest", 16000, "budget"),
    ])  # fmt: skip
    join, ingest = table.splitlines()[1:]
    assert join.split()[2:4] == ["5,830", "4,858"]
    assert "2 of 3 converged" in join and "5,660–6,000" in join
    assert "≥ 16,000" in ingest and "0 of 2 converged" in ingest
