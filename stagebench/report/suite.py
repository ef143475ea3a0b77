"""report.html of a suite directory: the stage ladder from comparison.json, then its runs
drawn together (per-second latency, distributions, throughput, resources), their
warnings and conditions, the suite's settings, and a link to each run's own page.

A suite's runs are written beside its directory; each has its own report.html with
everything of that run. Here they share one plot per view, one line per run, which
keeps the page small (one copy of plotly.js, a quantile grid per run) and puts the
stages side by side.
"""

import json
from html import escape
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from ground import rundir
from stagebench.report import figures, tables
from stagebench.report.data import RunData, load_run
from stagebench.report.order import order_kind
from stagebench.report.page import figure, link, section
from stagebench.results.documents import read_comparison

Labelled = list[tuple[str, RunData]]


def suite_page(suite_dir: Path) -> tuple[str, list[str]]:
    # a suite's page is drawn from its runs even before its comparison.json is written
    doc = read_comparison(suite_dir) if (suite_dir / rundir.COMPARISON).is_file() else {}
    runs: Labelled = [
        (_label(run), load_run(run.path))
        for run in rundir.suite_runs(suite_dir)
        if (run.path / rundir.SUMMARY).is_file()
    ]
    title = f"Suite {doc.get('suite', suite_dir.name)}: the stage ladder"
    return title, [
        _lead(doc),
        section(
            "Stage ladder",
            tables.ladder_table(doc["stages"]),
            figure(figures.ladder_figure(doc["stages"])),
        ),
        section("Per-second latency", figure(_latency(runs), _missing(rundir.TIMESERIES))),
        section(
            "Latency distributions",
            figure(
                figures.cdf_figure(
                    [(label, run.cdf) for label, run in runs if run.cdf is not None]
                ),
                _missing(rundir.LATENCIES),
            ),
        ),
        section("Throughput", figure(_throughput(runs), _missing(rundir.TIMESERIES))),
        section(
            "Resources",
            _resources_table(runs),
            figure(_engine_cpu(runs), _missing(rundir.RESOURCES)),
        ),
        section("Warnings and conditions", *(_conditions(label, run) for label, run in runs)),
        section(
            "Effective configuration",
            _settings(doc),
            tables.config_tables(runs[0][1].config if runs else None),
        ),
        section(
            "Runs",
            "<ul>"
            + "".join(
                f"<li>{link(suite_dir, run.dir, label)}: {escape(run.dir.name)}</li>"
                for label, run in runs
            )
            + "</ul>",
        ),
    ]


def _missing(name: str) -> str:
    """Why a chart of the runs is left out: none of their directories here holds ``name``."""
    return (
        f"No chart: none of the runs' directories here holds {name} (a suite kept as "
        "reference data keeps its runs' summaries only)."
    )


def _label(run: rundir.SuiteRun) -> str:
    text = run.stage if run.impl == "builtin" else f"{run.stage} ({run.impl})"
    return text if run.round is None else f"{text} r{run.round}"


def _lead(doc: dict[str, Any]) -> str:
    order = doc.get("order") or {}
    repeat = doc.get("repeat", 1)
    kind = order_kind(order.get("seed", "-"), repeat, order.get("fixed_first", False))
    parts = [f"{repeat} round(s), {kind}; created {doc.get('created_at', '-')}."]
    if doc.get("differences"):
        parts.append(
            "NOT COMPARABLE: the runs differ in more than stage and implementation: "
            + "; ".join(doc["differences"])
        )
    for failed in doc.get("failed") or []:
        parts.append(
            f"Failed, so missing: round {failed['round']}, {failed['stage']} "
            f"({failed['impl']}): {failed['error']}"
        )
    return "".join(f'<p class="lead">{escape(p)}</p>' for p in parts)


def _latency(runs: Labelled) -> go.Figure:
    lines, bands = [], []
    for label, run in runs:
        if run.timeseries is None:
            continue
        lines.append(
            figures.latency_lines(run.timeseries, figures.origin_ms(run.summary), label)[0]
        )
        windows, _ = figures.disturbance_bands(run.summary)
        bands += windows
    earliest = min((line.x[0] for line in lines), default=0.0)
    if earliest < 0:
        bands.insert(0, figures.Band(earliest, 0.0, "warm-up, not measured", "#7f7f7f"))
    return figures.timeline_figure(
        figures.Timeline(lines, _labelled_once(bands)),
        "Per-second p50 of every run, through its warm-up",
        "latency, ms (broker clock; log axis)",
        log_y=True,
    )


def _labelled_once(bands: list[figures.Band]) -> list[figures.Band]:
    """The runs' windows of one kind overlap: only the first keeps its label."""
    shown, kept = set(), []
    for band in bands:
        kept.append(
            figures.Band(band.x0, band.x1, "" if band.label in shown else band.label, band.color)
        )
        shown.add(band.label)
    return kept


def _throughput(runs: Labelled) -> go.Figure:
    lines = [
        figures.throughput_lines(run.timeseries, figures.origin_ms(run.summary), label)[1]
        for label, run in runs
        if run.timeseries is not None
    ]
    return figures.timeline_figure(
        figures.Timeline(lines), "Outputs per broker second of every run", "messages / s"
    )


def _engine_cpu(runs: Labelled) -> go.Figure:
    lines = []
    for label, run in runs:
        if run.resources is None:
            continue
        rows = run.resources[run.resources["process"] == "engine"]
        t = ((rows["time_ms"] - figures.origin_ms(run.summary)) / 1000).tolist()
        lines.append(figures.Line(label, t, rows["cpu_percent"].astype(float).tolist()))
    fig = figures.timeline_figure(
        figures.Timeline(lines), "The engine's CPU in every run", "CPU, % of one core"
    )
    fig.update_xaxes(title_text="seconds since the measured period started (this machine's clock)")
    return fig


def _resources_table(runs: Labelled) -> str:
    rows = []
    for label, run in runs:
        usage = run.summary.metadata.get("resources") or {}
        engine, broker = usage.get("engine") or {}, usage.get("broker") or {}
        machine = run.summary.machine or {}
        share = machine.get("saturated_share")
        rows.append(
            [
                tables.cell(label),
                tables.num(engine.get("cpu_percent_mean")),
                tables.num(engine.get("rss_mb_max")),
                tables.num(engine.get("heap_used_mb_max")),
                tables.num(engine.get("gc_ms_per_s_mean")),
                tables.num(broker.get("cpu_percent_mean")),
                tables.num(machine.get("cpu_total_pct_mean")),
                tables.num(machine.get("cpu_outside_run_pct_mean")),
                tables.num(None if share is None else round(share * 100, 1)),
            ]
        )
    header = [
        "run",
        "engine CPU % mean",
        "engine RSS MB max",
        "engine heap MB max",
        "engine GC ms/s mean",
        "broker CPU % mean",
        "machine CPU % mean",
        "outside the run CPU % mean",
        "saturated seconds %",
    ]
    return tables.table(header, rows)


def _conditions(label: str, run: RunData) -> str:
    s = run.summary
    head = f"{label}: {len(s.warnings)} warning(s)" + (
        ", NOT TRUSTED" if s.trusted is False else ""
    )
    return (
        f"<details><summary>{escape(head)}</summary>"
        f"{tables.warnings_list(s.warnings, s.trusted is False)}{tables.conditions(s)}"
        "</details>"
    )


def _settings(doc: dict[str, Any]) -> str:
    values = (doc.get("settings") or {}).get("run") or {}
    rows = [
        [tables.cell(k), f"<td><code>{escape(json.dumps(v))}</code></td>"]
        for k, v in values.items()
    ]
    return (
        "<h3>[run], the suite's</h3>"
        + tables.table(["key", "value"], rows)
        + ("<h3>the first run's configuration</h3>")
    )
