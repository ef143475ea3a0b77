"""The typed capacity result writes capacity.json exactly as the dict-built one did.

capacity_golden.json holds, for a few hand-made searches, the capacity.json text written
before :class:`~stagebench.results.capacity.CapacityResult` existed (its machine and
versions stand-ins), with the ``bottleneck`` key added since and a probe's
``p99_intended`` written only when known; the model must give the same keys, in the same
order, with the same values.
"""

import json
from pathlib import Path

from stagebench.capacity import measure
from stagebench.capacity.probe import Criteria, Probe
from stagebench.capacity.search import SearchResult, search
from stagebench.config.settings import RunConfig
from tests.stagebench.capacity.test_search import fake

GOLDEN = Path(__file__).with_name("capacity_golden.json")


def _fitted() -> SearchResult:
    probe, _ = fake(capacity=5750)
    return search(probe, start=500, max_rate=100_000, precision=0.10)


def _publisher_bound() -> SearchResult:
    probe, _ = fake(capacity=10_000, publisher_max=3000)
    return search(probe, start=500, max_rate=100_000, precision=0.10)


def _nothing_sustainable() -> SearchResult:
    probes = [Probe(500.0, False, ("p50 rising by 300 ms/min",), p50=900.0, p99=5000.0,
                    engine_cpu_pct=190.0, run_dir="results/x/p1", seconds=90.0)]  # fmt: skip
    return SearchResult(probes, None, 500.0, None, "nothing-sustainable")


def _stopped_by_the_budget() -> SearchResult:
    probes = [
        Probe(1000.0, True, p50=230.0, p99=500.0, engine_cpu_pct=110.0, run_dir="r/a",
              seconds=90.0),
        Probe(2000.0, False, ("drain 14 s",), p50=900.0, p99=5000.0, engine_cpu_pct=190.0,
              run_dir="r/b", seconds=95.5),
        Probe(1410.0, True, p50=260.0, p99=610.0, engine_cpu_pct=133.0, run_dir="r/c",
              seconds=91.0),
    ]  # fmt: skip
    return SearchResult(probes, 1410.0, 2000.0, None, "budget")


CASES = {
    "fitted": (_fitted, Criteria()),
    "publisher_bound": (_publisher_bound, Criteria(max_p50_ms=5000.0)),
    "nothing_sustainable": (_nothing_sustainable, Criteria(max_engine_cpu_pct=80.0)),
    "stopped_by_the_budget": (_stopped_by_the_budget, Criteria(max_drain_s=12.0)),
}


def capacity_json(found: SearchResult, criteria: Criteria) -> str:
    """capacity.json's text for a search of join, as the command writes it."""
    # the golden documents were written with a 5 s tail
    probe_base = RunConfig(stage="join", results_dir="results/search", tail_s=5.0,
                           warmup_min_s=240.0)  # fmt: skip
    result = measure.capacity_result(
        "join", "spark", "builtin", found, criteria, 1234.56, precision=0.10, growth=2.0,
        out=Path("results/search"),
        probe={key: getattr(probe_base, key) for key in measure.PROBE_KEYS},
    )  # fmt: skip
    return json.dumps(result.as_dict(), indent=2, default=str) + "\n"


def test_capacity_json_is_what_it_held_before_the_model(monkeypatch):
    monkeypatch.setattr(measure, "machine", lambda: {"cores": 2, "cpu": "made up"})
    monkeypatch.setattr(measure, "versions", lambda **_: {"stagebench": "0.1.0"})
    golden = json.loads(GOLDEN.read_text())
    assert list(golden) == list(CASES)
    for name, (case, criteria) in CASES.items():
        assert capacity_json(case(), criteria) == golden[name], name
