"""report.html of a capacity search's directory: the answer, every probe's latency and
verdict on the offered rate with the fitted chance of passing, the per-second latency of
the probes that decided it, and the probes' table with a link to each probe's own page.

A verdict often rests on a trend, which the probes' percentiles cannot show, so the
last plot draws the per-second p50 of the last probe at each end of the bracket
(:func:`deciding_probes`), named with the trend its verdict read.
"""

import json
from html import escape
from pathlib import Path
from typing import Any

from engines.registry import chosen
from evaluator.text.number_format import format_exact
from ground import rundir
from stagebench.report import figures, tables
from stagebench.report.data import load_run, located, read_json
from stagebench.report.page import figure, link, section
from stagebench.results.documents import read_capacity

NO_FIT = (
    "No pass curve: without a pass and a failure both there is no fit, and the bracket "
    "bounds the capacity."
)


def deciding_probes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The last probe run at each end of the bracket, the highest sustainable rate and the
    lowest unsustainable one, those that exist, with a run directory."""
    chosen = []
    for rate, verdict in ((doc["sustainable_mps"], "sustainable"),
                          (doc["first_unsustainable_mps"], "unsustainable")):  # fmt: skip
        runs = [p for p in doc["probes"]
                if p["rate"] == rate and p["verdict"] == verdict and p["run_dir"]]  # fmt: skip
        if rate is not None and runs:
            chosen.append(runs[-1])
    return chosen


def label(doc: dict[str, Any]) -> str:
    """The stage a capacity.json searched, "engine:stage" when another engine than the
    stage's own ran it (as ``--stages`` names it)."""
    own = chosen(None, doc["stage"]).name
    engine = doc.get("engine") or own
    return doc["stage"] if engine == own else f"{engine}:{doc['stage']}"


def capacity_page(capacity_dir: Path) -> tuple[str, list[str]]:
    doc = read_capacity(capacity_dir)
    first = next(
        (
            d
            for p in doc["probes"]
            if (d := located(p["run_dir"], capacity_dir)) and (d / rundir.CONFIG).is_file()
        ),
        None,
    )
    return f"Capacity of {label(doc)} ({doc['impl']})", [
        f'<p class="lead">{escape(headline(doc))}</p>',
        *(f"<p>{escape(line)}</p>" for line in _conditions(doc)),
        section(
            "Probes on the offered rate",
            figure(figures.capacity_figure(doc)),
            figure(figures.chance_figure(doc), NO_FIT),
            _probes_table(capacity_dir, doc),
        ),
        section("Per-second latency of the deciding probes", _deciding(capacity_dir, doc)),
        section(
            "Criteria and probe settings",
            _settings(doc),
            tables.config_tables(read_json(first / rundir.CONFIG) if first else None),
        ),
    ]


def headline(doc: dict[str, Any]) -> str:
    """The search's answer in one sentence."""
    took = f"search stopped: {doc['stopped']}, after {doc['seconds'] / 60:.1f} min"
    if doc.get("capacity_mps") is not None:
        (low, high), (low90, high90) = doc["capacity_ci95_mps"], doc["pass90_ci95_mps"]
        return (
            f"Capacity {doc['capacity_mps']:,.0f} msg/s (95 % interval {low:,.0f}–{high:,.0f}); "
            f"passed 90 % of the time at {doc['pass90_mps']:,.0f} msg/s ({low90:,.0f}–"
            f"{high90:,.0f}); {took}."
        )
    low, high = doc.get("sustainable_mps"), doc.get("first_unsustainable_mps")
    bracket = f"highest sustainable {format_exact(low)} msg/s, first unsustainable "
    return f"No fitted capacity: {bracket}{format_exact(high)} msg/s; {took}."


def _conditions(doc: dict[str, Any]) -> list[str]:
    """What limited the search at each end of its bracket, and the tuned setting it ran
    at (capacity --tune), the lines that exist."""
    lines = []
    for end, which in (("sustainable", "highest sustainable"),
                       ("unsustainable", "lowest unsustainable")):  # fmt: skip
        if named := (doc.get("bottleneck") or {}).get(end):
            lines.append(f"At the {which} probe, limited by {named['text']}.")
    if ran := doc.get("setting"):
        values = ", ".join(f"{k} = {v}" for k, v in ran["values"].items())
        lines.append(f"Ran at the {ran['profile']} setting: {values or 'none'}.")
    return lines


def _probes_table(capacity_dir: Path, doc: dict[str, Any]) -> str:
    rows = []
    for probe in doc["probes"]:
        run_dir = located(probe["run_dir"], capacity_dir)
        page = (
            link(capacity_dir, run_dir, run_dir.name)
            if run_dir and (run_dir / rundir.REPORT_HTML).is_file()
            else "-"
        )
        rows.append(
            [
                tables.num(probe["rate"], stat="rate"),
                tables.cell(probe["verdict"]),
                tables.num(probe["p50"]),
                tables.num(probe["p99"]),
                tables.num(probe["engine_cpu_pct"]),
                tables.cell("; ".join(probe["reasons"]) or "-"),
                tables.cell((probe.get("bottleneck") or {}).get("text") or "-"),
                f"<td>{page}</td>",
            ]
        )
    header = [
        "rate msg/s",
        "verdict",
        "p50 ms",
        "p99 ms",
        "engine CPU % of a core",
        "reasons",
        "limited by",
        "run",
    ]
    return tables.table(header, rows)


def _deciding(capacity_dir: Path, doc: dict[str, Any]) -> str:
    lines = []
    for probe in deciding_probes(doc):
        run_dir = located(probe["run_dir"], capacity_dir)
        if run_dir is None or not (run_dir / rundir.SUMMARY).is_file():
            continue
        run = load_run(run_dir)
        if run.timeseries is None:
            continue
        steady = run.summary.steady_state or {}
        slope = steady.get("slope_ms_per_min")
        trend = f"{steady['verdict']} {slope:+,.0f} ms/min" if slope is not None else "no trend"
        name = f"{probe['rate']:,.0f} msg/s, {probe['verdict']} ({trend})"
        lines.append(figures.latency_lines(run.timeseries, figures.origin_ms(run.summary), name)[0])
    if not lines:
        return "<p>No deciding probe left its per-second series.</p>"
    earliest = min(line.x[0] for line in lines)
    bands = [figures.Band(earliest, 0.0, "lead-in and warm-up", "#7f7f7f")] if earliest < 0 else []
    return figure(
        figures.timeline_figure(
            figures.Timeline(lines, bands),
            "At capacity and just above it",
            "per-second p50, ms (log axis)",
            log_y=True,
        )
    )


def _settings(doc: dict[str, Any]) -> str:
    values = {
        **{f"criteria.{k}": v for k, v in doc["criteria"].items()},
        **{f"probe.{k}": v for k, v in (doc.get("probe") or {}).items()},
        "precision": doc.get("precision"),
        "growth": doc.get("growth"),
    }
    rows = [
        [tables.cell(k), f"<td><code>{escape(json.dumps(v))}</code></td>"]
        for k, v in values.items()
    ]
    return tables.table(["setting", "value"], rows) + "<h3>the first probe's configuration</h3>"
