"""What limited a probe, named from its run's resource summary, each rule at its line."""

from dataclasses import replace

import pytest

from stagebench.capacity import bottleneck
from stagebench.capacity.bottleneck import name
from stagebench.capacity.probe import Criteria, judge
from stagebench.capacity.table import format_table, headline, limit
from tests.stagebench.capacity.records import record
from tests.stagebench.capacity.test_search import _summary


def usage(engine=None, broker=None, bench=None, saturated=0.0, cores=2):
    """A run's ``metadata.resources`` with the groups given (CPU % of one core)."""
    base = {"cpu_percent_mean": 20.0, "thread_max_pct_mean": 10.0, "gc_ms_per_s_mean": 5.0}
    return {
        "engine": {**base, **(engine or {})},
        "broker": {**base, **(broker or {})},
        "bench": {**base, **(bench or {})},
        "machine": {"cores": cores, "saturated_share": saturated,
                    "cpu_outside_run_pct_mean": 3.0},
    }  # fmt: skip


def test_a_publisher_bound_probe_or_a_whole_core_of_this_process_is_the_publisher():
    assert name(usage(), publisher_bound=True).resource == "publisher"
    line = bottleneck.PUBLISHER_CORE_PCT
    assert name(usage(bench={"cpu_percent_mean": line})).resource == "publisher"
    assert name(usage(bench={"cpu_percent_mean": line - 1})).resource == "none"


def test_one_saturated_thread_is_named_with_its_process_even_with_idle_cores():
    line = bottleneck.THREAD_BUSY_PCT
    busy = {"thread_max_pct_mean": line, "thread_max_name": "Join[3] -> Sin",
            "cpu_percent_mean": 110.0}  # fmt: skip
    found = name(usage(engine=busy, cores=8))
    assert (found.resource, found.process) == ("thread", "engine")
    assert "'Join[3] -> Sin': 90 % of a core" in found.text
    assert "used 1.1 cores of 8" in found.text
    assert name(usage(broker={"thread_max_pct_mean": line})).process == "broker"
    assert name(usage(engine={"thread_max_pct_mean": line - 1})).resource == "none"


def test_the_collectors_then_a_groups_cores_then_the_machine():
    gc = bottleneck.GC_BUSY_MS_PER_S
    assert name(usage(engine={"gc_ms_per_s_mean": gc})).resource == "gc"
    assert name(usage(engine={"gc_ms_per_s_mean": gc - 1})).resource == "none"
    assert name(usage(engine={"cpu_percent_mean": 180.0})).resource == "engine"  # 0.9 of 2
    assert name(usage(engine={"cpu_percent_mean": 179.0})).resource == "none"
    assert name(usage(broker={"cpu_percent_mean": 180.0})).resource == "broker"
    machine = name(usage(engine={"cpu_percent_mean": 120.0}, saturated=0.5))
    assert machine.resource == "machine"
    assert machine.text == (
        "the machine: all 2 cores busy in 50% of the seconds (the engine 1.2 cores, "
        "the broker 0.2 cores, the publisher 0.2 cores, others 0.0 cores)"
    )
    assert name(usage(saturated=0.49)).resource == "none"


def test_nothing_saturated_says_the_engine_waits_and_no_samples_say_nothing():
    found = name(usage())
    assert (found.resource, found.process) == ("none", None)
    assert "the engine's own pacing, its trigger, buffer flushes" in found.text
    assert name({"machine": {"cores": 2}}) is None
    assert name({}) is None


@pytest.fixture
def searches():
    def doc(resource, process=None, text="why"):
        named = {"resource": resource, "process": process, "text": text}
        return record(engine="flink", sustainable_mps=1000.0, first_unsustainable_mps=2000.0,
                      seconds=60.0, stopped="budget",
                      bottleneck={"sustainable": None, "unsustainable": named})  # fmt: skip

    return doc


def test_the_table_names_the_commonest_limit_and_the_headline_says_it(searches):
    docs = [searches("thread", "engine"), searches("gc", "engine"), searches("thread", "engine")]
    assert limit(docs) == "thread (engine), gc"
    assert limit([replace(docs[0], bottleneck=None)]) == "-"  # from before it was named
    assert "limited by" in format_table(docs).splitlines()[0]
    assert headline(searches("none", text="no resource saturated")).endswith(
        "; above it, limited by no resource saturated"
    )


def test_a_probes_verdict_carries_what_limited_it():
    meta = _summary().metadata
    resources = usage(engine={"gc_ms_per_s_mean": 300.0})
    probe = judge(1000.0, _summary(metadata={**meta, "resources": resources}), Criteria())
    assert probe.bottleneck == {
        "resource": "gc", "process": "engine",
        "text": "the engine's garbage collection: 300 ms per second",
    }  # fmt: skip
    assert probe.as_dict()["bottleneck"]["resource"] == "gc"
