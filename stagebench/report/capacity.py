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

import numpy as np
import plotly.graph_objects as go

from engines.registry import chosen
from evaluator.text.number_format import format_exact
from ground import rundir
from stagebench.report import figures, tables
from stagebench.report.data import load_run, located, read_json
from stagebench.report.figures import FLOOR_MS, VERDICT_STYLE, layout
from stagebench.report.page import figure, link, section
from stagebench.results.capacity import CapacityResult, Probe
from stagebench.results.documents import read_capacity

NO_FIT = (
    "No pass curve: without a pass and a failure both there is no fit, and the bracket "
    "bounds the capacity."
)


def deciding_probes(doc: CapacityResult) -> list[Probe]:
    """The last probe run at each end of the bracket, the highest sustainable rate and the
    lowest unsustainable one, those that exist, with a run directory."""
    chosen = []
    for rate, verdict in ((doc.sustainable_mps, "sustainable"),
                          (doc.first_unsustainable_mps, "unsustainable")):  # fmt: skip
        runs = [p for p in doc.probes
                if p.rate == rate and p.verdict == verdict and p.run_dir]  # fmt: skip
        if rate is not None and runs:
            chosen.append(runs[-1])
    return chosen


def label(doc: CapacityResult) -> str:
    """The stage a capacity.json searched, "engine:stage" when another engine than the
    stage's own ran it (as ``--stages`` names it)."""
    return stage_label(doc.stage, doc.engine)


def stage_label(stage: str, engine: str | None) -> str:
    """``stage``, or "engine:stage" when ``engine`` is not the stage's own."""
    own = chosen(None, stage).name
    return stage if (engine or own) == own else f"{engine}:{stage}"


def capacity_page(capacity_dir: Path) -> tuple[str, list[str]]:
    doc = read_capacity(capacity_dir)
    first = next(
        (
            d
            for p in doc.probes
            if (d := located(p.run_dir, capacity_dir)) and (d / rundir.CONFIG).is_file()
        ),
        None,
    )
    return f"Capacity of {label(doc)} ({doc.impl})", [
        f'<p class="lead">{escape(headline(doc))}</p>',
        *(f"<p>{escape(line)}</p>" for line in _conditions(doc)),
        section(
            "Probes on the offered rate",
            figure(capacity_figure(doc)),
            figure(chance_figure(doc), NO_FIT),
            _probes_table(capacity_dir, doc),
        ),
        section("Per-second latency of the deciding probes", _deciding(capacity_dir, doc)),
        section(
            "Criteria and probe settings",
            _settings(doc),
            tables.config_tables(read_json(first / rundir.CONFIG) if first else None),
        ),
    ]


def headline(doc: CapacityResult) -> str:
    """The search's answer in one sentence."""
    took = f"search stopped: {doc.stopped}, after {doc.seconds / 60:.1f} min"
    if doc.capacity_mps is not None and doc.capacity_ci95_mps and doc.pass90_ci95_mps:
        (low, high), (low90, high90) = doc.capacity_ci95_mps, doc.pass90_ci95_mps
        return (
            f"Capacity {doc.capacity_mps:,.0f} msg/s (95 % interval {low:,.0f}–{high:,.0f}); "
            f"passed 90 % of the time at {doc.pass90_mps or 0:,.0f} msg/s ({low90:,.0f}–"
            f"{high90:,.0f}); {took}."
        )
    bracket = f"highest sustainable {format_exact(doc.sustainable_mps)} msg/s, first unsustainable "
    return (
        f"No fitted capacity: {bracket}{format_exact(doc.first_unsustainable_mps)} msg/s; {took}."
    )


def _conditions(doc: CapacityResult) -> list[str]:
    """What limited the search at each end of its bracket, and the tuned setting it ran
    at (capacity --tune), the lines that exist."""
    lines = []
    for end, which in (("sustainable", "highest sustainable"),
                       ("unsustainable", "lowest unsustainable")):  # fmt: skip
        if named := (doc.bottleneck or {}).get(end):
            lines.append(f"At the {which} probe, limited by {named['text']}.")
    if ran := doc.setting:
        values = ", ".join(f"{k} = {v}" for k, v in ran["values"].items())
        lines.append(f"Ran at the {ran['profile']} setting: {values or 'none'}.")
    return lines


def _probes_table(capacity_dir: Path, doc: CapacityResult) -> str:
    rows = []
    for probe in doc.probes:
        run_dir = located(probe.run_dir, capacity_dir)
        page = (
            link(capacity_dir, run_dir, run_dir.name)
            if run_dir and (run_dir / rundir.REPORT_HTML).is_file()
            else "-"
        )
        rows.append(
            [
                tables.num(probe.rate, stat="rate"),
                tables.cell(probe.verdict),
                tables.num(probe.p50),
                tables.num(probe.p99),
                tables.num(probe.engine_cpu_pct),
                tables.cell("; ".join(probe.reasons) or "-"),
                tables.cell((probe.bottleneck or {}).get("text") or "-"),
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


def _deciding(capacity_dir: Path, doc: CapacityResult) -> str:
    lines = []
    for probe in deciding_probes(doc):
        run_dir = located(probe.run_dir, capacity_dir)
        if run_dir is None or not (run_dir / rundir.SUMMARY).is_file():
            continue
        run = load_run(run_dir)
        if run.timeseries is None:
            continue
        steady = run.summary.steady_state or {}
        slope = steady.get("slope_ms_per_min")
        trend = f"{steady['verdict']} {slope:+,.0f} ms/min" if slope is not None else "no trend"
        name = f"{probe.rate:,.0f} msg/s, {probe.verdict} ({trend})"
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


def _settings(doc: CapacityResult) -> str:
    values = {
        **{f"criteria.{k}": v for k, v in doc.criteria.items()},
        **{f"probe.{k}": v for k, v in (doc.probe or {}).items()},
        "precision": doc.precision,
        "growth": doc.growth,
    }
    rows = [
        [tables.cell(k), f"<td><code>{escape(json.dumps(v))}</code></td>"]
        for k, v in values.items()
    ]
    return tables.table(["setting", "value"], rows) + "<h3>the first probe's configuration</h3>"


def capacity_figure(doc: CapacityResult) -> go.Figure:
    """Every probe's p50 and p99 on the offered rate, by verdict, with the capacity and its
    95 % interval and the p50 limit."""
    fig = go.Figure()
    for verdict, (color, symbol) in VERDICT_STYLE.items():
        chosen = [p for p in doc.probes if p.verdict == verdict and p.p50 is not None]
        for key, opacity in (("p50", 1.0), ("p99", 0.45)):
            if chosen:
                fig.add_trace(
                    go.Scatter(
                        x=[p.rate for p in chosen],
                        y=[max(getattr(p, key) or 0, FLOOR_MS) for p in chosen],
                        mode="markers",
                        name=f"{key}, {verdict}",
                        opacity=opacity,
                        marker={"color": color, "symbol": symbol, "size": 9},
                    )
                )
    limit = doc.criteria["max_p50_ms"]
    rates = [p.rate for p in doc.probes] or [1.0]
    fig.add_trace(
        go.Scatter(
            x=[min(rates) / 1.1, max(rates) * 1.1],
            y=[limit, limit],
            mode="lines",
            name=f"p50 limit {limit / 1000:g} s",
            line={"dash": "dot", "color": "#7f7f7f"},
        )
    )
    capacity = doc.capacity_mps or doc.sustainable_mps
    if capacity:
        name = "capacity" if doc.capacity_mps else "highest sustainable"
        if doc.capacity_ci95_mps:
            low, high = doc.capacity_ci95_mps
            fig.add_vrect(x0=low, x1=high, fillcolor="#1f77b4", opacity=0.1, line_width=0)
            name += f" (95 % interval {low:,.0f}–{high:,.0f})"
        top = max([p.p99 or 0 for p in doc.probes] + [limit]) * 1.5
        fig.add_trace(
            go.Scatter(
                x=[capacity, capacity],
                y=[FLOOR_MS, top],
                mode="lines",
                name=f"{name}: {capacity:,.0f} msg/s",
                line={"dash": "dash", "color": "#1f77b4"},
            )
        )
    return layout(
        fig,
        f"{doc.stage} ({doc.impl}): latency against offered rate",
        xaxis={"title": "offered rate, msg/s (both input topics; log axis)", "type": "log"},
        yaxis={"title": "latency, ms (log axis)", "type": "log"},
        hovermode="closest",
    )


def chance_figure(doc: CapacityResult) -> go.Figure:
    """Every probe the publisher fed as passed (1) or failed (0) on the offered rate, the
    fitted curve (``pass_curve``: logit P = intercept + slope · ln rate), its 0.5 crossing
    (the capacity) and its 0.9 crossing, each with the 95 % interval where the posterior's
    band crosses that level; empty without a fit (no pass and failure both)."""
    fig, curve = go.Figure(), doc.pass_curve
    if not curve or not doc.capacity_ci95_mps:
        return fig
    fed = [p for p in doc.probes if p.verdict != "publisher-bound"]
    for verdict, outcome in (("sustainable", 1.0), ("unsustainable", 0.0)):
        rates = [p.rate for p in fed if p.verdict == verdict]
        color, symbol = VERDICT_STYLE[verdict]
        fig.add_trace(go.Scatter(x=rates, y=[outcome] * len(rates), mode="markers",
                                 name=f"probe {verdict}", opacity=0.6,
                                 marker={"color": color, "symbol": symbol, "size": 9}))  # fmt: skip
    (low, high), rates = doc.capacity_ci95_mps, [p.rate for p in fed]
    at = np.geomspace(min(*rates, low) / 1.05, max(*rates, high) * 1.05, 200)
    chance = 1 / (1 + np.exp(-(curve["intercept"] + curve["slope"] * np.log(at))))
    fig.add_trace(go.Scatter(x=at, y=chance, mode="lines", line={"color": "#1f77b4"},
                             name="chance of passing (fitted curve)"))  # fmt: skip
    crossings = ((doc.capacity_mps, doc.capacity_ci95_mps, 0.5, "capacity"),
                 (doc.pass90_mps, doc.pass90_ci95_mps, 0.9, "passed 90 %"))  # fmt: skip
    for value, interval, level, text in crossings:
        if value is None or interval is None:
            continue
        low, high = interval
        fig.add_hline(y=level, line_dash="dot", line_color="#7f7f7f", line_width=1)
        error = {"type": "data", "symmetric": False, "array": [high - value],
                 "arrayminus": [value - low]}  # fmt: skip
        fig.add_trace(go.Scatter(x=[value], y=[level], mode="markers", error_x=error,
                                 marker={"color": "#1f77b4", "symbol": "diamond", "size": 10},
                                 name=f"{text}: {value:,.0f} msg/s (95 % interval "
                                 f"{low:,.0f}–{high:,.0f})"))  # fmt: skip
    return layout(
        fig,
        f"Pass or fail against offered rate, {len(fed)} probes",
        xaxis={"title": "offered rate, msg/s (both input topics; log axis)", "type": "log"},
        yaxis={"title": "chance a probe passes", "range": [-0.08, 1.08]},
        hovermode="closest",
    )
