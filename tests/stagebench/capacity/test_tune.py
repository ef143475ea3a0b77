"""capacity --tune: the candidates an engine declares, the order they are tried in, and the
search that keeps a candidate only when it sustains the rate the best failed at and then
searches higher; with fake searches, no Kafka."""

from dataclasses import replace

import pytest

from engines.flink.settings import FlinkSettings
from engines.kafka_streams.settings import KafkaStreamsSettings
from engines.spark.settings import SparkSettings
from stagebench.capacity.tune import candidates, score, tune
from stagebench.cli.capacity import with_setting
from stagebench.config.layers import Settings
from stagebench.config.profiles import knobs, profile
from stagebench.results.capacity import CapacityResult

FLINK = {"buffer_timeout_ms": (0, 10, 100), "parallelism": (1, 2)}


def test_each_engine_declares_what_trades_latency_for_throughput_latency_end_first():
    for settings in (FlinkSettings, KafkaStreamsSettings, SparkSettings):
        found = knobs(settings)
        assert found, settings
        defaults = settings()
        # the latency profile is the defaults: a run at the defaults is a latency run
        assert profile(found, "latency") == {k: getattr(defaults, k) for k in found}
    assert knobs(FlinkSettings)["buffer_timeout_ms"] == (0, 10, 100)
    assert knobs(None) == {}


def test_the_throughput_profile_first_then_one_setting_at_a_time_never_twice():
    start = profile(FLINK, "latency")
    tried = list(candidates(FLINK, start))
    assert tried[0] == {"buffer_timeout_ms": 100, "parallelism": 2}
    assert tried[1:] == [
        {"buffer_timeout_ms": 10, "parallelism": 1},
        {"buffer_timeout_ms": 100, "parallelism": 1},
        {"buffer_timeout_ms": 0, "parallelism": 2},
    ]
    assert start not in tried


def result(capacity, failed_at, seconds=600.0, where="r"):
    return CapacityResult(
        stage="join", engine="flink", impl="builtin", capacity_mps=capacity,
        capacity_ci95_mps=[capacity * 0.9, capacity * 1.1], pass90_mps=capacity * 0.9,
        pass90_ci95_mps=[capacity * 0.8, capacity], pass_curve=None,
        sustainable_mps=capacity, first_unsustainable_mps=failed_at, publisher_limit_mps=None,
        precision=0.1, bracket_width=None, stopped="converged", engine_cores_used=None,
        sustainable_mps_per_core=None, bottleneck=None, setting=None, criteria={},
        seconds=seconds, probes=[], machine={}, versions={}, dir=where, growth=2.0, probe={},
    )  # fmt: skip


def capacity_of(setting):
    """A made-up engine: the buffer timeout buys throughput, parallelism costs it here."""
    return 5000.0 + 50 * setting["buffer_timeout_ms"] - 2000 * (setting["parallelism"] - 1)


@pytest.fixture
def engine():
    calls = {"search": [], "challenge": []}

    def search(setting, from_rate):
        calls["search"].append((setting, from_rate))
        capacity = capacity_of(setting)
        return result(capacity, capacity * 1.1, where=str(len(calls["search"])))

    def challenge(setting, rate):
        calls["challenge"].append((setting, rate))
        return capacity_of(setting) >= rate

    return search, challenge, calls


def test_a_candidate_costs_one_probe_unless_it_sustains_the_rate_the_best_failed_at(engine):
    search, challenge, calls = engine
    start = profile(FLINK, "latency")
    tuning = tune(FLINK, start, search, challenge, lambda: None)
    assert tuning.best_setting == {"buffer_timeout_ms": 100, "parallelism": 1}
    assert score(tuning.best) == 10_000
    assert score(tuning.start) == 5000
    # the throughput profile (8,000) beat the latency one's failing rate (5,500), was
    # searched, then lost to buffer_timeout_ms=100 alone (10,000) once that was challenged
    # at 8,800; every other candidate failed its probe and was never searched
    searched = [setting for setting, _ in calls["search"]]
    assert searched == [start, {"buffer_timeout_ms": 100, "parallelism": 2},
                        {"buffer_timeout_ms": 100, "parallelism": 1}]  # fmt: skip
    assert calls["search"][1][1] == 5500.0  # a search starts at the rate it sustained
    assert tuning.stopped == "exhausted"
    assert [t["sustained"] for t in tuning.tried].count(True) == 2
    settings = [t["setting"] for t in tuning.tried]
    assert len(settings) == len({tuple(s.items()) for s in settings})  # none twice


def test_tuning_stops_at_the_budget_and_when_nothing_failed(engine):
    search, challenge, calls = engine
    start = profile(FLINK, "latency")
    # room for no search as long as the first (600 s)
    assert tune(FLINK, start, search, challenge, lambda: 599.0).stopped == "budget"
    assert calls["challenge"] == []

    def unbounded(setting, from_rate):
        return replace(result(5000.0, None), stopped="max-rate")

    untuned = tune(FLINK, start, unbounded, challenge, lambda: None)
    assert untuned.stopped.startswith("no rate failed")
    assert untuned.tried == [] and untuned.best is untuned.start


def test_a_setting_goes_into_the_engines_table_and_says_where_it_came_from():
    given = Settings({"run": {"rate": 5}, "engine.flink": {"linger_ms": 5}},
                     {"run": {"rate": "cli"}, "engine.flink": {"linger_ms": "cli"}})  # fmt: skip
    tuned = with_setting(given, "engine.flink", {"buffer_timeout_ms": 100})
    assert tuned.values["engine.flink"] == {"linger_ms": 5, "buffer_timeout_ms": 100}
    assert tuned.sources["engine.flink"]["buffer_timeout_ms"] == "capacity --tune"
    assert given.values["engine.flink"] == {"linger_ms": 5}  # the given settings untouched


def test_a_search_in_an_engines_own_mode_is_recorded_apart(monkeypatch, tmp_path):
    from stagebench.capacity import measure
    from stagebench.capacity.probe import Criteria
    from stagebench.capacity.search import SearchResult
    from stagebench.config.settings import RunConfig
    from stagebench.console import Console

    monkeypatch.setattr(measure, "search", lambda *a: SearchResult([], None, None, None, "budget"))
    monkeypatch.setattr(measure, "write", lambda out, result: type("P", (), {"describe": str})())
    monkeypatch.setattr(measure, "machine", dict)
    monkeypatch.setattr(measure, "versions", lambda **_: {})
    base = RunConfig(stage="ingest", results_dir=str(tmp_path), application="per-run")
    bounds = measure.Bounds(500, 1000, 0.1, 2.0, None)
    real_time = Settings({"pipeline": {"trigger": "real-time"}}, {"pipeline": {"trigger": "x"}})
    for settings, impl in ((Settings(), "builtin"), (real_time, "builtin@real-time")):
        found = measure.one_search("ingest", "builtin", base, settings, Criteria(), bounds,
                                   Console())  # fmt: skip
        assert found.impl == impl


def test_ctrl_c_ends_the_tuning_with_what_it_found(engine):
    search, _, _ = engine

    def interrupted(setting, rate):
        raise KeyboardInterrupt

    tuning = tune(FLINK, profile(FLINK, "latency"), search, interrupted, lambda: None)
    assert tuning.stopped == "interrupted" and tuning.best is tuning.start
    stopped = tune(FLINK, {}, lambda s, r: replace(result(1.0, 2.0), stopped="interrupted"),
                   interrupted, lambda: None)  # fmt: skip
    assert stopped.stopped == "interrupted" and stopped.tried == []


def test_the_command_searches_each_candidate_in_the_engines_table_and_ends_with_the_best(
    monkeypatch, capsys, tmp_path
):
    from stagebench.capacity import measure
    from stagebench.cli.capacity import tuned_searches
    from stagebench.config.settings import RunConfig
    from stagebench.console import Console
    from stagebench.history import index

    ran = []

    def one_search(name, impl, base, settings, criteria, bounds, console, setting=None):
        flink = {**profile(knobs(FlinkSettings), "latency"), **settings.section("engine.flink")}
        ran.append((flink, bounds.start, setting["profile"]))
        capacity = 5000.0 + 50 * flink["buffer_timeout_ms"]
        return replace(result(capacity, capacity * 1.1, where=str(len(ran))), setting=setting)

    def challenge(name, impl, base, settings, criteria, rate, console):
        sustained = 5000.0 + 50 * settings.section("engine.flink")["buffer_timeout_ms"] >= rate
        return type("Probe", (), {"sustainable": sustained})()

    monkeypatch.setattr(measure, "one_search", one_search)
    monkeypatch.setattr(measure, "challenge", challenge)
    monkeypatch.setattr(index, "record_or_warn", lambda *a: None)
    base = RunConfig(stage="join", engine="flink", results_dir=str(tmp_path))
    bounds = measure.Bounds(500, 100_000, 0.1, 2.0, None)
    found, stopped = tuned_searches("join", "builtin", base, Settings(), None, bounds,
                                    Console(), 3600)  # fmt: skip
    assert stopped == "exhausted"
    assert ran[0] == (profile(knobs(FlinkSettings), "latency"), 500, "latency")
    assert found[-1].setting["values"]["buffer_timeout_ms"] == 100  # the best last
    assert {r.dir for r in found} == {str(i) for i in range(1, len(ran) + 1)}
    out = capsys.readouterr().out
    assert "best setting of flink:join: " in out
    assert "run or suite at it: --set engine.flink." in out
    assert "--set engine.flink.buffer_timeout_ms=100" in out
