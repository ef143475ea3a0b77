"""The capacity picture: which probes it traces through time, that it draws them, and the
fitted chance of passing beneath the latencies."""

import json

import pandas as pd
from matplotlib.image import imread

from ground import rundir
from stagebench.capacity.fit import fit_pass
from stagebench.capacity.measure import _fit_fields
from stagebench.capacity.plot import _tick_labels, deciding_probes, plot
from tests.evaluator.summaries import summary_doc

START_MS = 1_795_624_012_000


def _probe(rate, verdict, run_dir=None, p50=300.0):
    return {
        "rate": rate,
        "verdict": verdict,
        "p50": p50,
        "p99": None if p50 is None else 2 * p50,
        "run_dir": run_dir,
    }


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
    fed = [p for p in probes if p["verdict"] != "publisher-bound"]
    fit = fitted and fit_pass(
        [p["rate"] for p in fed], [p["verdict"] == "sustainable" for p in fed]
    )
    return {"stage": "join", "impl": "builtin", "sustainable_mps": low,
            "first_unsustainable_mps": high, "probes": probes,
            "criteria": {"max_p50_ms": 10_000.0}, **_fit_fields(fit or None)}  # fmt: skip


def test_the_deciding_probes_are_the_last_at_capacity_and_the_confirmed_failure():
    probes = [
        _probe(4000, "sustainable", "a"), _probe(8000, "unsustainable", "b"),
        _probe(8000, "unsustainable", "c"),  # the confirmation the search relied on
        _probe(5660, "unsustainable", "d"), _probe(5660, "sustainable", "e"),  # noisy, then held
        _probe(6730, "unsustainable", "f"), _probe(6730, "unsustainable", "g"),
    ]  # fmt: skip
    chosen = deciding_probes(_doc(probes, 5660, 6730))
    assert [p["run_dir"] for p in chosen] == ["e", "g"]
    # a search that never found a sustainable rate has only its failure to show
    assert [p["run_dir"] for p in deciding_probes(_doc(probes[1:3], None, 8000))] == ["c"]
    # a probe whose Spark job failed has no run directory, nothing to trace
    assert deciding_probes(_doc([_probe(8000, "unsustainable")], None, 8000)) == []


def test_the_plot_adds_the_time_panel_only_when_a_deciding_probe_has_its_series(tmp_path):
    steady = _run_dir(tmp_path, "at", [300.0] * 60, slope=2.0)
    rising = _run_dir(tmp_path, "above", [300.0 + 100 * i for i in range(60)], slope=6_000.0)
    probes = [_probe(4000, "sustainable", steady), _probe(4400, "unsustainable", rising, 3000.0)]
    both = plot(_doc(probes, 4000, 4400), tmp_path / "both.png")
    # the search's answer alone: no run directories to read
    bare = [{**p, "run_dir": None} for p in probes]
    alone = plot(_doc(bare, 4000, 4400), tmp_path / "alone.png")
    assert imread(both).shape[1] > 1.5 * imread(alone).shape[1]
    # a deleted run directory leaves the panel out instead of failing the report
    gone = [probes[0], {**probes[1], "run_dir": str(tmp_path / "gone")}]
    (tmp_path / "at" / rundir.TIMESERIES).unlink()
    assert imread(plot(_doc(gone, 4000, 4400), tmp_path / "none.png")).shape == imread(alone).shape
    assert (
        plot(_doc([_probe(500, "unsustainable", p50=None)], None, 500), tmp_path / "x.png") is None
    )


def test_the_fitted_chance_of_passing_is_drawn_beneath_the_latencies(tmp_path):
    verdicts = [(500, "sustainable"), (1000, "sustainable"), (2000, "unsustainable"),
                (1410, "sustainable"), (1680, "unsustainable"), (1540, "sustainable"),
                (1610, "sustainable"), (1610, "unsustainable"),
                (1600, "publisher-bound")]  # fmt: skip
    probes = [_probe(rate, verdict) for rate, verdict in verdicts]
    probes.append(_probe(1650, "unsustainable", p50=None))  # its Spark job failed: counted
    fitted = plot(_doc(probes, 1610, 1680, fitted=True), tmp_path / "fitted.png")
    bare = plot(_doc(probes, 1610, 1680), tmp_path / "bare.png")
    assert imread(fitted).shape[0] > 1.5 * imread(bare).shape[0]
    assert imread(fitted).shape[1] == imread(bare).shape[1]


def test_rates_closer_to_a_labelled_one_than_a_twelfth_of_the_axis_are_not_labelled():
    # 500 to 8,000: labels at least 16^(1/12) = 1.26 times apart
    assert _tick_labels([500, 1000, 2000, 4000, 5660, 6170, 6450, 6730, 8000]) == [
        "500", "1,000", "2,000", "4,000", "5,660", "", "", "", "8,000"]  # fmt: skip
