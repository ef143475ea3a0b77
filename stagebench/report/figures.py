"""report.html's plots: pure functions from a results directory's data to Plotly figures.

Each function takes what :mod:`stagebench.report.data` read (summary.json's document,
the per-second series, the quantile grid, resources.csv, comparison.json's rows,
capacity.json) and returns a figure, so each can be checked without Kafka or a browser.
Time runs in seconds from the start of the measured period (negative: the lead-in and
warm-up), on the broker's clock for latency and throughput and on this machine's for
resources. A log axis cannot show 0 ms, the latency of a record
handled within the broker's millisecond: such values are drawn at :data:`FLOOR_MS`.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evaluator.model.record import Stats
from evaluator.model.result import Summary
from stagebench.report.data import Cdf
from stagebench.resources.sampler import MACHINE, OUTSIDE

FLOOR_MS = 0.5
"""Where a latency under 1 ms is drawn on a log axis."""
HEIGHT = 380
MARKED = (("p50", "p50"), ("p99", "p99"), ("p99_9", "p99.9"))
"""summary.json's percentiles the CDF marks, with their labels."""
VERDICT_STYLE = {
    "sustainable": ("#2ca02c", "circle"),
    "unsustainable": ("#d62728", "x"),
    "publisher-bound": ("#7f7f7f", "square"),
}
PROCESS_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
WINDOW_COLOR = {"burst": "#ff7f0e"}
"""Shading of a disturbance window by kind; a fault's is red."""


@dataclass(frozen=True)
class Line:
    name: str
    x: list[float]
    y: list[float | None]
    dash: str | None = None


@dataclass(frozen=True)
class Band:
    """A shaded stretch of the time axis, with its label."""

    x0: float
    x1: float
    label: str
    color: str


@dataclass(frozen=True)
class Timeline:
    """Lines on the measured period's time, with the bands and marks that explain them."""

    lines: list[Line]
    bands: list[Band] = field(default_factory=list)
    marks: list[tuple[float, str]] = field(default_factory=list)


def layout(fig: go.Figure, title: str, **layout: Any) -> go.Figure:
    """The common look; ``layout`` adds to it or overrides it."""
    common = {
        "title": title,
        "height": HEIGHT,
        "template": "plotly_white",
        "hovermode": "x unified",
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "legend": {"font": {"size": 11}},
    }
    fig.update_layout(**(common | layout))
    return fig


def origin_ms(summary: Summary) -> int:
    """Time 0 of a run's plots: the start of its measured period."""
    return summary.period.measured_from_ms


def latency_lines(series: pd.DataFrame, origin: int, name: str = "") -> list[Line]:
    """Per-second p50 and p99 (seconds without outputs are gaps)."""
    t = (series["second"] - origin / 1000).tolist()
    prefix = f"{name} " if name else ""
    return [
        Line(f"{prefix}p50", t, _nan_to_none(series["latency_p50_ms"])),
        Line(f"{prefix}p99", t, _nan_to_none(series["latency_p99_ms"]), dash="dot"),
    ]


def _nan_to_none(values: pd.Series) -> list[float | None]:
    return [None if pd.isna(v) else float(v) for v in values]


def period_bands(summary: Summary, series: pd.DataFrame | None) -> list[Band]:
    """The warm-up before the measured period (and lead-in, when there was one) and the
    tail after it: what is drawn but not measured."""
    origin = origin_ms(summary)
    first = series["second"].min() - origin / 1000 if series is not None else 0.0
    last = series["second"].max() + 1 - origin / 1000 if series is not None else 0.0
    end = (summary.period.measured_to_ms - origin) / 1000
    lead_in = (summary.config.get("run") or {}).get("lead_in_s")
    bands = []
    if first < 0:
        label = "lead-in and warm-up" if lead_in else "warm-up"
        bands.append(Band(first, 0.0, f"{label}, not measured", "#7f7f7f"))
    if last > end:
        bands.append(Band(end, last, "tail, not measured", "#7f7f7f"))
    return bands


def disturbance_bands(summary: Summary) -> tuple[list[Band], list[tuple[float, str]]]:
    """Each fault or burst window from summary.json's ``recovery``, where its latency
    recovered (or that it did not) and, where that was another time, where it settled."""
    recovery = summary.recovery or {}
    origin = origin_ms(summary)
    bands, marks = [], []
    for window in recovery.get("windows") or []:
        start, end = (window["start_ms"] - origin) / 1000, (window["end_ms"] - origin) / 1000
        color = WINDOW_COLOR.get(window["kind"], "#d62728")
        bands.append(Band(start, max(end, start + 0.2), window["kind"], color))
        if window["recovered"] is True:
            after = window["recovery_s"]
            marks.append((end + after, f"recovered {after:g} s after the {window['kind']}"))
        elif window["recovered"] is False:
            marks.append((end, f"not recovered after the {window['kind']}"))
        settled = window.get("settled_s")
        if settled is not None and settled != window["recovery_s"]:
            offset = window["offset"]
            where = "" if offset is None else f" at {offset * 100:+.0f} % of before"
            text = f"settled {settled:g} s after the {window['kind']}{where}"
            marks.append((end + settled, text))
    return bands, marks


def timeline_figure(timeline: Timeline, title: str, y_title: str, log_y: bool = False) -> go.Figure:
    fig = go.Figure()
    for line in timeline.lines:
        y = line.y if not log_y else [None if v is None else max(v, FLOOR_MS) for v in line.y]
        fig.add_trace(
            go.Scatter(
                x=line.x,
                y=y,
                name=line.name,
                mode="lines",
                line={"dash": line.dash},
                connectgaps=False,
            )
        )
    for band in timeline.bands:
        fig.add_vrect(
            x0=band.x0,
            x1=band.x1,
            fillcolor=band.color,
            opacity=0.15,
            line_width=0,
            annotation_text=band.label,
            annotation_position="top left",
            annotation_font_size=10,
        )
    for x, label in timeline.marks:
        fig.add_vline(
            x=x,
            line_dash="dash",
            line_color="#2ca02c",
            annotation_text=label,
            annotation_position="bottom right",
            annotation_font_size=10,
        )
    return layout(
        fig,
        title,
        xaxis_title="seconds since the measured period started (broker clock)",
        yaxis={"title": y_title, "type": "log" if log_y else "linear"},
    )


def throughput_lines(series: pd.DataFrame, origin: int, name: str = "") -> list[Line]:
    t = (series["second"] - origin / 1000).tolist()
    prefix = f"{name} " if name else ""
    return [
        Line(f"{prefix}input", t, series["input_count"].astype(float).tolist(), dash="dot"),
        Line(f"{prefix}output", t, series["output_count"].astype(float).tolist()),
    ]


def cdf_figure(curves: list[tuple[str, Cdf]], marks: Stats | None = None) -> go.Figure:
    """The distribution of measured latencies on a log axis; ``marks``: summary.json's
    percentiles drawn as vertical lines named with their values."""
    fig = go.Figure()
    for name, curve in curves:
        fig.add_trace(
            go.Scatter(
                x=np.maximum(curve.latency_ms, FLOOR_MS),
                y=curve.probability,
                mode="lines",
                name=f"{name} ({curve.count:,} outputs)",
                customdata=curve.latency_ms,
                hovertemplate="%{customdata:,.1f} ms: %{y:.5f}<extra></extra>",
            )
        )
    for key, label in MARKED:
        value = (marks or {}).get(key)
        if value is None:
            continue
        text = f"{label} {value:,.3f}".rstrip("0").rstrip(".") + " ms"
        fig.add_trace(
            go.Scatter(
                x=[max(value, FLOOR_MS)] * 2,
                y=[0, 1],
                mode="lines",
                name=text,
                line={"dash": "dot", "width": 1},
                hovertemplate=f"{text}<extra></extra>",
            )
        )
    return layout(
        fig,
        "Latency distribution of the measured outputs",
        xaxis={"title": "latency, ms (log axis; under 1 ms drawn at 0.5)", "type": "log"},
        yaxis={"title": "share of outputs at or below", "range": [0, 1.02]},
        hovermode="closest",
    )


def resources_figure(usage: pd.DataFrame, origin: int, cores: int | None) -> go.Figure:
    """CPU (% of one core) and memory of every process of the run, the machine's total and
    what ran outside the run, per second of this machine's clock; one colour a process."""
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
        subplot_titles=("CPU, % of one core", "memory, MB"),
    )  # fmt: skip
    palette = iter(PROCESS_COLORS)
    for name, rows in usage.groupby("process", sort=False):
        name = str(name)
        color = {MACHINE: "#222222", OUTSIDE: "#999999"}.get(name) or next(palette, None)
        t = (rows["time_ms"] - origin) / 1000
        style = {"color": color, "dash": "dot" if name == OUTSIDE else None}
        fig.add_trace(go.Scatter(x=t, y=rows["cpu_percent"], name=f"{name} CPU", line=style),
                      row=1, col=1)  # fmt: skip
        if name in (MACHINE, OUTSIDE):
            continue
        fig.add_trace(go.Scatter(x=t, y=rows["rss_mb"], name=f"{name} RSS",
                                 line={"color": color}), row=2, col=1)  # fmt: skip
        if rows["heap_used_mb"].notna().any():
            heap = {"color": color, "dash": "dash"}
            fig.add_trace(go.Scatter(x=t, y=rows["heap_used_mb"], name=f"{name} JVM heap used",
                                     line=heap), row=2, col=1)  # fmt: skip
    if cores:
        fig.add_hline(y=cores * 100, line_dash="dash", line_color="black", row=1, col=1,
                      annotation_text="all cores", annotation_font_size=10)  # fmt: skip
    fig.update_xaxes(title_text="seconds since the measured period started (this machine's "
                     "clock)", row=2, col=1)  # fmt: skip
    layout(fig, "Resources: engine, broker, bench, the machine and what ran outside the run")
    fig.update_layout(height=HEIGHT * 1.6)
    return fig


def ladder_figure(rows: list[dict[str, Any]]) -> go.Figure:
    """p50 and p99 of every stage with their 95 % intervals, beside the increment each
    adds over the stage under it, with its interval."""
    labels = [
        f"{r['stage']}" if r["impl"] == "builtin" else f"{r['stage']} ({r['impl']})" for r in rows
    ]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("latency per stage, ms", "increment over the stage below, ms"),
    )
    for key, name in (("p50", "p50"), ("p99", "p99")):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[r[key] for r in rows],
                name=name,
                error_y=_error(rows, key, f"{key}_ci95"),
            ),
            row=1,
            col=1,
        )
        inc = f"increment_{key}"
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[r[inc] for r in rows],
                name=f"+{name}",
                error_y=_error(rows, inc, f"{inc}_ci95"),
            ),
            row=1,
            col=2,
        )
    return layout(fig, "The stage ladder", barmode="group", hovermode="closest")


def _error(rows: list[dict[str, Any]], key: str, interval: str) -> dict[str, Any]:
    """Asymmetric error bars from each row's interval (an increment's: the one its verdict
    was made with, where it has one); none where a row has none."""
    up, down = [], []
    for row in rows:
        ci, value = row.get(f"{interval}_joint") or row.get(interval), row.get(key)
        up.append(None if ci is None or value is None else ci[1] - value)
        down.append(None if ci is None or value is None else value - ci[0])
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down}
