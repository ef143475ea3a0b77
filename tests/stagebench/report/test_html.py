"""report.html without a browser: the figures from their data, and the pages of a run, a
suite and a capacity search drawn from made-up results directories."""

import json
import re
import subprocess
import sys
from dataclasses import replace
from html import escape
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ground import rundir
from ground.errors import ConfigError
from stagebench.capacity.measure import write_set
from stagebench.report import curves, figures, tables
from stagebench.report import html as html_report
from stagebench.report.capacity import NO_FIT, capacity_figure
from stagebench.report.data import cdf, load_run
from stagebench.report.page import PLOTLY_JS
from stagebench.results.documents import read_capacity
from tests.stagebench.capacity.records import probe, record
from tests.stagebench.results_dirs import (
    FAULT_AT_S,
    FAULT_S,
    START_MS,
    TAIL_S,
    WARMUP_S,
    make_capacity,
    make_run,
    make_suite,
)

PLOTLY_JS_HEADER = "* plotly.js v"
"""The first line of plotly.js's own header comment."""


def test_the_warm_up_and_tail_are_shaded_around_the_measured_period(tmp_path):
    run = load_run(make_run(tmp_path, "join", "0000000a"))
    bands = figures.period_bands(run.summary, run.timeseries)
    assert [b.label for b in bands] == ["warm-up, not measured", "tail, not measured"]
    assert bands[0].x0 == -WARMUP_S and bands[0].x1 == 0
    assert bands[1].x0 == 40 and bands[1].x1 >= 40 + TAIL_S


def test_a_fault_is_shaded_and_its_recovery_marked_from_the_summary(tmp_path):
    run = load_run(make_run(tmp_path, "join", "0000000b", fault=True))
    bands, marks = figures.disturbance_bands(run.summary)
    assert [(b.label, b.x0, b.x1) for b in bands] == [
        ("broker-kill", FAULT_AT_S, FAULT_AT_S + FAULT_S)
    ]
    assert marks == [(FAULT_AT_S + FAULT_S + 2.0, "recovered 2 s after the broker-kill")]
    not_back = {**run.summary.recovery["windows"][0], "recovered": False}
    summary = replace(run.summary, recovery={"windows": [not_back]})
    assert figures.disturbance_bands(summary)[1] == [
        (FAULT_AT_S + FAULT_S, "not recovered after the broker-kill")
    ]
    assert figures.disturbance_bands(replace(run.summary, recovery=None)) == ([], [])


def test_where_the_latency_settled_is_marked_when_it_is_not_the_recovery(tmp_path):
    run = load_run(make_run(tmp_path, "join", "0000000c", fault=True))
    window = run.summary.recovery["windows"][0]
    elsewhere = {**window, "recovered": False, "recovery_s": None, "settled_s": 3.0,
                 "offset": 0.31, "level": "new"}  # fmt: skip
    summary = replace(run.summary, recovery={"windows": [elsewhere]})
    assert figures.disturbance_bands(summary)[1] == [
        (FAULT_AT_S + FAULT_S, "not recovered after the broker-kill"),
        (FAULT_AT_S + FAULT_S + 3.0, "settled 3 s after the broker-kill at +31 % of before"),
    ]
    # at the level before, the recovery's mark is the settled one too
    back = {**window, "settled_s": 2.0, "offset": 0.02, "level": "before"}
    summary = replace(run.summary, recovery={"windows": [back]})
    assert figures.disturbance_bands(summary)[1] == [
        (FAULT_AT_S + FAULT_S + 2.0, "recovered 2 s after the broker-kill")
    ]


def test_the_cdf_is_a_quantile_grid_that_keeps_the_tail():
    values = np.arange(1, 100_001)
    curve = cdf(values)
    assert curve.count == 100_000 and curve.probability.size < 400
    assert np.all(np.diff(curve.latency_ms) >= 0)
    for q in (0.5, 0.99, 0.999):  # the marked percentiles sit on the grid
        at = np.flatnonzero(np.isclose(curve.probability, q))
        assert at.size == 1 and curve.latency_ms[at[0]] == np.quantile(values, q)
    assert cdf(np.array([])) is None


def test_the_cdf_marks_carry_the_summary_values_and_zero_is_drawn_on_the_log_axis():
    curve = cdf(np.array([0, 0, 1, 2, 3]))
    fig = figures.cdf_figure([("floor", curve)], {"p50": 1.0, "p99": 2.96, "p99_9": None})
    names = [t.name for t in fig.data]
    assert names == ["floor (5 outputs)", "p50 1 ms", "p99 2.96 ms"]
    assert min(fig.data[0].x) == figures.FLOOR_MS and fig.layout.xaxis.type == "log"


def test_the_ladder_draws_each_interval_as_error_bars():
    rows = [
        {"stage": "floor", "impl": "builtin", "p50": 2.0, "p50_ci95": [1.0, 4.0], "p99": 5.0,
         "p99_ci95": None, "increment_p50": None, "increment_p99": None},
        {"stage": "join", "impl": "custom", "p50": 200.0, "p50_ci95": [190.0, 230.0],
         "p99": 400.0, "p99_ci95": [350.0, 450.0], "increment_p50": 198.0,
         "increment_p50_ci95": [180.0, 210.0], "increment_p99": 395.0},
    ]  # fmt: skip
    fig = figures.ladder_figure(rows)
    p50 = fig.data[0]
    assert list(p50.x) == ["floor", "join (custom)"]
    assert list(p50.error_y.array) == [2.0, 30.0] and list(p50.error_y.arrayminus) == [1.0, 10.0]
    assert list(fig.data[1].error_y.array) == [None, 12.0]


def test_the_ladder_table_shows_latencies_as_the_terminal_table_and_keeps_them_exact():
    row = {"stage": "ingest", "impl": "builtin", "repetitions": 3, "p50": 47.333,
           "p50_ci95": [45.2, 49.6], "p95": 60.5, "p99": 8.25, "p99_ci95": [7.5, 9.0],
           "increment_p50": 12.4, "increment_p50_ci95": [-1.5, 26.0],
           "increment_p50_significant": False, "increment_p99": None,
           "increment_over": "floor/builtin"}  # fmt: skip
    html = tables.ladder_table([row])
    assert 'data-stat="p50" data-value="47.333">47</td><td>[45–50]</td>' in html
    assert 'data-stat="p99" data-value="8.25">8.2</td><td>[7.5–9.0]</td>' in html
    assert 'data-value="12.4">+12</td><td>[−2–+26] n.s.</td>' in html
    assert "47.333<" not in html


def test_the_capacity_plot_places_the_probes_by_verdict():
    probes = [
        probe(200.0, "sustainable", p50=0.0, p99=10.0),
        probe(400.0, "unsustainable", p50=900.0, p99=5e3),
        probe(500.0, "unsustainable"),  # its job failed
    ]
    doc = record(capacity_mps=300.0, capacity_ci95_mps=[250.0, 350.0], sustainable_mps=200.0,
                 probes=probes)  # fmt: skip
    names = [t.name for t in capacity_figure(doc).data]
    assert names == [
        "p50, sustainable", "p99, sustainable", "p50, unsustainable", "p99, unsustainable",
        "p50 limit 10 s", "capacity (95 % interval 250–350): 300 msg/s",
    ]  # fmt: skip


def test_a_run_page_holds_every_part_with_the_summary_numbers(tmp_path):
    run_dir = make_run(tmp_path, "join", "0000000c", fault=True)
    page = html_report.write(run_dir)
    html = page.path.read_text()
    summary = json.loads((run_dir / rundir.SUMMARY).read_text())
    assert page.path == run_dir / rundir.REPORT_HTML and page.bytes == len(html.encode())
    # plotly.js once beside the results directories, loaded from there: offline
    assert f'<script src="../{PLOTLY_JS}">' in html and PLOTLY_JS_HEADER not in html
    assert (tmp_path / PLOTLY_JS).read_text().count(PLOTLY_JS_HEADER) == 1
    alone = html_report.write(run_dir, self_contained=True).path.read_text()
    assert alone.count(PLOTLY_JS_HEADER) == 1 and "<script src=" not in alone
    p50 = summary["latency_ms"]["p50"]
    assert f'data-stat="p50" data-value="{p50!r}"' in html
    for part in ("Per-second latency", "Latency distribution", "broker-kill", "recovered 2 s",
                 "Records per broker second", "engine CPU", "Warnings and conditions",
                 "not steady", "Effective configuration", "[pipeline]", "warm-up"):  # fmt: skip
        assert part in html, part
    assert html.count('class="plotly-graph-div"') == 4
    assert page.bytes < 6e6 and "MB, written in" in page.describe()


def test_a_suite_page_draws_its_runs_together_under_10_mb(tmp_path, monkeypatch):
    suite_dir = make_suite(
        tmp_path, ["floor", "ingest", "parse", "join", "tumbling"], 3, monkeypatch
    )
    page = suite_dir / rundir.REPORT_HTML  # the suite flow wrote it
    html = page.read_text()
    assert html.count("no page yet") == 15  # its made-up runs have none
    runs = [r.path for r in rundir.suite_runs(suite_dir)]
    for run_dir in runs:
        html_report.write(run_dir)
    html = html_report.write(suite_dir).path.read_text()
    rows = json.loads((suite_dir / rundir.COMPARISON).read_text())["stages"]
    for row in rows:
        cell = f'data-stage="{row["stage"]}" data-stat="p50" data-value="{row["p50"]!r}"'
        assert cell in html, row["stage"]
    links = re.findall(r'href="([^"]+/report\.html)"', html)
    assert len(links) == 15 and all((suite_dir / link).is_file() for link in links)
    assert html.count('class="plotly-graph-div"') == 5
    # the suite's pages and its runs' together, with their one plotly.js
    pages = [page, *(d / rundir.REPORT_HTML for d in runs), tmp_path / PLOTLY_JS]
    assert sum(p.stat().st_size for p in pages) < 10e6
    assert not list(tmp_path.glob("**/*.min.js"))[1:]


def test_a_suite_kept_without_its_runs_files_says_why_its_charts_are_missing(tmp_path, monkeypatch):
    suite_dir = make_suite(tmp_path, ["floor", "ingest"], 1, monkeypatch)
    for run in rundir.suite_runs(suite_dir):
        for name in (rundir.LATENCIES, rundir.TIMESERIES, rundir.RESOURCES):
            (run.path / name).unlink(missing_ok=True)
    html = html_report.write(suite_dir).path.read_text()
    assert html.count('class="plotly-graph-div"') == 1  # the ladder, from comparison.json
    for name in (rundir.TIMESERIES, rundir.LATENCIES, rundir.RESOURCES):
        assert f"No chart: none of the runs&#x27; directories here holds {name}" in html


def test_a_page_shows_no_directory_of_the_measuring_machine(tmp_path):
    run_dir = make_run(tmp_path, "ingest", "0000000f")
    config = json.loads((run_dir / rundir.CONFIG).read_text())
    config["run"]["results_dir"] = "/home/someone/bench/results"
    config["sources"] = {"run": {"results_dir": "file /home/someone/bench/bench.toml"}}
    (run_dir / rundir.CONFIG).write_text(json.dumps(config))
    html = html_report.write(run_dir).path.read_text()
    assert "/home/someone" not in html and str(tmp_path) not in html
    assert "&#x27;…/results&#x27;" in html and "file …/bench.toml" in html


def test_a_capacity_page_shows_the_probes_and_the_deciding_ones(tmp_path):
    page = html_report.write(make_capacity(tmp_path))
    html = page.path.read_text()
    assert "highest sustainable 200 msg/s, first unsustainable 400 msg/s" in html
    assert 'data-stat="rate" data-value="400.0"' in html and "p50 rising by 300" in html
    assert "No deciding probe" not in html  # the deciding probes through time
    assert html.count('class="plotly-graph-div"') == 2 and escape(NO_FIT) in html
    fitted = html_report.write(make_capacity(tmp_path / "fitted", fitted=True)).path.read_text()
    assert fitted.count('class="plotly-graph-div"') == 3 and escape(NO_FIT) not in fitted


def test_a_set_of_searches_draws_their_curves_together(tmp_path):
    spark = make_capacity(tmp_path)
    flink = tmp_path / "20261126T170000Z-capacity-join-0c0ffee1"
    flink.mkdir()
    doc = json.loads((spark / rundir.CAPACITY).read_text())
    doc["criteria"]["slo_ms"] = {"p99": 1000.0}
    (flink / rundir.CAPACITY).write_text(json.dumps({**doc, "engine": "flink"}))
    html_report.write(spark)
    results = [SimpleNamespace(dir=str(d)) for d in (spark, flink)]
    out = write_set(tmp_path, results, "stage  capacity msg/s")  # type: ignore[arg-type]
    assert rundir.kind(out) == "capacities"
    docs = [read_capacity(d) for d in (spark, flink)]
    names = [t.name for t in curves.curves_figure(docs).data]
    assert names == ["join p50", "join p99", "flink:join p50", "flink:join p99",
                     "target p99 ≤ 1,000 ms"]  # fmt: skip
    # a probe whose publisher fell behind draws the p99 from the intended send time
    last = docs[1].probes[-1]
    behind = replace(last, p99_intended=3 * (last.p99 or 0) + 100)
    docs[1] = replace(docs[1], probes=[*docs[1].probes[:-1], behind])
    names = [t.name for t in curves.curves_figure(docs).data]
    assert names[4] == "flink:join p99 from intended send time" and len(names) == 6
    html = (out / rundir.REPORT_HTML).read_text()
    assert "Capacities of join, flink:join" in html and "stage  capacity msg/s" in html
    assert html.count('class="plotly-graph-div"') == 1
    assert f"../{spark.name}/report.html" in html  # each search's own page


def test_a_directory_without_results_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="not a results directory"):
        rundir.kind(tmp_path)


def test_the_report_command_writes_and_sizes_each_page(tmp_path):
    runs = [make_run(tmp_path, "ingest", "0000000d"), make_capacity(tmp_path)]
    result = subprocess.run(
        [sys.executable, "-m", "stagebench", "report", *map(str, runs)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all("MB, written in" in line for line in lines)
    assert all((d / rundir.REPORT_HTML).is_file() for d in runs)
    empty = subprocess.run(
        [sys.executable, "-m", "stagebench", "report", str(tmp_path / "nothing")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert empty.returncode == 2 and empty.stderr.startswith("ERROR: ")  # bad input


def test_a_page_survives_missing_files(tmp_path):
    run_dir = make_run(tmp_path, "ingest", "0000000e")
    for name in (rundir.LATENCIES, rundir.TIMESERIES, rundir.RESOURCES, rundir.CONFIG):
        (run_dir / name).unlink()
    html = html_report.write(run_dir).path.read_text()
    assert "cpu_percent_mean" in html and "[pipeline]" in html  # both from summary.json
    assert html.count('class="plotly-graph-div"') == 0
    assert figures.latency_lines(
        pd.DataFrame({"second": [START_MS // 1000], "latency_p50_ms": [np.nan],
                      "latency_p99_ms": [np.nan]}), START_MS)[0].y == [None]  # fmt: skip
