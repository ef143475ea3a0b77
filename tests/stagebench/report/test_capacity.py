"""A capacity search's figures: which probes its page traces through time, and the fitted
chance of passing on the offered rate, as Plotly figure data (no browser)."""

import json
import math

import pandas as pd

from ground import rundir
from stagebench.capacity.fit import fit_pass
from stagebench.capacity.measure import _fit_fields
from stagebench.report.capacity import _conditions, _deciding, chance_figure, deciding_probes
from tests.evaluator.summaries import summary_doc
from tests.stagebench.capacity.records import probe, record

START_MS = 1_795_624_012_000


def _probe(rate, verdict, run_dir=None, p50=300.0):
    return probe(rate, verdict, p50=p50, p99=None if p50 is None else 2 * p50, run_dir=run_dir)


def _run_dir(tmp_path, name, p50s, slope):
    """A probe's run directory: 30 s before its measured period, 30 s in it."""
    run_dir = tmp_path / name
    run_dir.mkdir()
    seconds = range(START_MS // 1000 - 30, START_MS // 1000 + 30)
    pd.DataFrame({"second": seconds, "input_count": 100, "output_count": 100,
                  "latency_p50_ms": p50s, "latency_p99_ms": [2 * v for v in p50s]}
                 ).to_csv(run_dir / rundir.TIMESERIES, index=False)  # fmt: skip
    verdict = "rising" if slope > 50 else "steady"
    steady = {"verdict": verdict, "slope_ms_per_min": slope}
    period = {"measured_from_ms": START_MS, "measured_to_ms": START_MS + 30_000}
    summary = summary_doc(steady_state=steady, period=period)
    (run_dir / rundir.SUMMARY).write_text(json.dumps(summary))
    return str(run_dir)


def _doc(probes, low, high, fitted=False):
    """capacity.json's document; with ``fitted``, the pass curve over its probes."""
    fed = [p for p in probes if not p["publisher_bound"]]
    fit = fitted and fit_pass([p["rate"] for p in fed], [p["sustainable"] for p in fed])
    return record(sustainable_mps=low, first_unsustainable_mps=high, probes=probes,
                  **_fit_fields(fit or None))  # fmt: skip


def test_the_deciding_probes_are_the_last_at_capacity_and_the_confirmed_failure():
    probes = [
        _probe(4000, "sustainable", "a"), _probe(8000, "unsustainable", "b"),
        _probe(8000, "unsustainable", "c"),  # the confirmation the search relied on
        _probe(5660, "unsustainable", "d"), _probe(5660, "sustainable", "e"),  # noisy, then held
        _probe(6730, "unsustainable", "f"), _probe(6730, "unsustainable", "g"),
    ]  # fmt: skip
    chosen = deciding_probes(_doc(probes, 5660, 6730))
    assert [p.run_dir for p in chosen] == ["e", "g"]
    # a search that never found a sustainable rate has only its failure to show
    assert [p.run_dir for p in deciding_probes(_doc(probes[1:3], None, 8000))] == ["c"]
    # a probe whose Spark job failed has no run directory, nothing to trace
    assert deciding_probes(_doc([_probe(8000, "unsustainable")], None, 8000)) == []


def test_the_deciding_probes_are_drawn_with_their_trend_when_their_series_is_left(tmp_path):
    steady = _run_dir(tmp_path, "at", [300.0] * 60, slope=2.0)
    rising = _run_dir(tmp_path, "above", [300.0 + 100 * i for i in range(60)], slope=6_000.0)
    probes = [_probe(4000, "sustainable", steady), _probe(4400, "unsustainable", rising, 3000.0)]
    both = _deciding(tmp_path, _doc(probes, 4000, 4400)).replace("\\u002f", "/")  # JSON's "/"
    assert "4,000 msg/s, sustainable (steady +2 ms/min) p50" in both
    assert "4,400 msg/s, unsustainable (rising +6,000 ms/min) p50" in both
    # a deleted run directory or series leaves the plot out instead of failing the page
    gone = [probes[0], {**probes[1], "run_dir": str(tmp_path / "gone")}]
    (tmp_path / "at" / rundir.TIMESERIES).unlink()
    assert _deciding(tmp_path, _doc(gone, 4000, 4400)).startswith("<p>No deciding probe")


def test_the_fitted_chance_of_passing_places_every_fed_probe_and_both_crossings():
    verdicts = [(500, "sustainable"), (1000, "sustainable"), (2000, "unsustainable"),
                (1410, "sustainable"), (1680, "unsustainable"), (1540, "sustainable"),
                (1610, "sustainable"), (1610, "unsustainable"),
                (1600, "publisher-bound")]  # fmt: skip
    probes = [_probe(rate, verdict) for rate, verdict in verdicts]
    probes.append(_probe(1650, "unsustainable", p50=None))  # its Spark job failed: counted
    doc = _doc(probes, 1610, 1680, fitted=True)
    fig = chance_figure(doc)
    passed, failed, curve, capacity, pass90 = fig.data
    assert (list(passed.x), set(passed.y)) == ([500, 1000, 1410, 1540, 1610], {1.0})
    assert (list(failed.x), set(failed.y)) == ([2000, 1680, 1610, 1650], {0.0})
    assert fig.layout.title.text == "Pass or fail against offered rate, 9 probes"
    # the curve falls through 0.5 at the capacity, within the axis the probes span
    assert curve.x[0] < 500 and curve.x[-1] > 2000
    assert all(a >= b for a, b in zip(curve.y, curve.y[1:], strict=False))
    at_capacity = min(range(len(curve.x)), key=lambda i: abs(curve.x[i] - doc.capacity_mps))
    assert math.isclose(curve.y[at_capacity], 0.5, abs_tol=0.05)
    for trace, key, level in ((capacity, "capacity", 0.5), (pass90, "pass90", 0.9)):
        (low, high), value = getattr(doc, f"{key}_ci95_mps"), getattr(doc, f"{key}_mps")
        assert (tuple(trace.x), tuple(trace.y)) == ((value,), (level,))
        assert trace.error_x.array[0] == high - value and trace.error_x.arrayminus[0] == value - low
        assert f"{value:,.0f} msg/s (95 % interval {low:,.0f}–{high:,.0f})" in trace.name
    assert [s.y0 for s in fig.layout.shapes] == [0.5, 0.9]
    # without a pass and a failure both there is no fit and nothing to draw
    assert chance_figure(_doc(probes[:2], 1000, None)).data == ()


def test_the_page_says_what_limited_each_end_and_the_setting_it_ran_at():
    named = {"resource": "thread", "process": "engine", "text": "one thread of the engine"}
    doc = record(bottleneck={"sustainable": None, "unsustainable": named},
                 setting={"profile": "tuned", "values": {"buffer_timeout_ms": 100}})  # fmt: skip
    assert _conditions(doc) == [
        "At the lowest unsustainable probe, limited by one thread of the engine.",
        "Ran at the tuned setting: buffer_timeout_ms = 100.",
    ]
    assert _conditions(record()) == []  # a search from before either was recorded
