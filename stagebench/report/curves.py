"""report.html of a set of capacity searches (``capacity --engines``, ``--stages``,
``--repeat``): their table, and the latency–throughput curve of every search in one
chart, every probe's p50 and p99 on the offered rate, one colour per engine and stage,
with the latency targets the searches held drawn across it; where the publisher fell
behind, the p99 from the intended send time beside them.

The set's directory holds capacities.json (the searches' directories, relative to it,
and the table ``capacity`` printed); the searches' own directories sit beside it.
"""

from html import escape
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from stagebench.report.capacity import label
from stagebench.report.figures import FLOOR_MS, PROCESS_COLORS, layout
from stagebench.report.page import figure, link, section
from stagebench.results.capacity import CapacityResult, Probe
from stagebench.results.documents import read_capacities, read_capacity


def read_set(set_dir: Path) -> tuple[dict[str, Any], list[tuple[Path, CapacityResult]]]:
    """capacities.json, and each search's directory with its capacity.json."""
    doc = read_capacities(set_dir)
    searches = [(set_dir / name).resolve() for name in doc["searches"]]
    return doc, [(path, read_capacity(path)) for path in searches]


def curves_figure(docs: list[CapacityResult]) -> go.Figure:
    """Each search's probes, p50 (filled) and p99 (open) on the offered rate, joined in
    the order of the rate, a colour per engine and stage (searches of one share it);
    every latency target (``--slo``) a dotted line."""
    fig = go.Figure()
    colours: dict[str, str] = {}
    for doc in docs:
        name = label(doc)
        colour = colours.setdefault(name, PROCESS_COLORS[len(colours) % len(PROCESS_COLORS)])
        probes = sorted((p for p in doc.probes if p.p50 is not None), key=lambda p: p.rate)
        for key, symbol, dash in (("p50", "circle", None), ("p99", "circle-open", "dot")):
            fig.add_trace(
                go.Scatter(
                    x=[p.rate for p in probes],
                    y=[max(getattr(p, key) or 0, FLOOR_MS) for p in probes],
                    mode="lines+markers",
                    name=f"{name} {key}",
                    legendgroup=name,
                    marker={"color": colour, "symbol": symbol, "size": 8},
                    line={"color": colour, "dash": dash, "width": 1},
                    text=[p.verdict for p in probes],
                    hovertemplate="%{x:,.0f} msg/s: %{y:,.0f} ms (%{text})",
                )
            )
        if any(_hides(p) for p in probes):
            fig.add_trace(_intended(name, colour, probes))
    rates = [p.rate for doc in docs for p in doc.probes] or [1.0]
    targets = {q: ms for doc in docs for q, ms in (doc.criteria.get("slo_ms") or {}).items()}
    for q, ms in sorted(targets.items(), key=lambda item: item[1]):
        fig.add_trace(
            go.Scatter(
                x=[min(rates) / 1.1, max(rates) * 1.1],
                y=[ms, ms],
                mode="lines",
                name=f"target {q.replace('_', '.')} ≤ {ms:,.0f} ms",
                line={"dash": "dot", "color": "#7f7f7f"},
            )
        )
    return layout(
        fig,
        "Latency against offered rate",
        xaxis={"title": "offered rate, msg/s (both input topics; log axis)", "type": "log"},
        yaxis={"title": "latency, ms (log axis)", "type": "log"},
        hovermode="closest",
    )


INTENDED_GAP = 0.1
"""A search's p99 from the intended send time is drawn when a probe's lies this share
above its broker-clock p99 (and 10 ms): where the publisher fell behind."""


def _hides(probe: Probe) -> bool:
    """Whether the publisher's lag hid latency from this probe's broker-clock p99."""
    intended, p99 = probe.p99_intended, probe.p99 or 0
    return intended is not None and intended > (1 + INTENDED_GAP) * p99 + 10


def _intended(name: str, colour: str, probes: list[Probe]) -> go.Scatter:
    """A search's p99 from the inputs' intended send times, dashed, with crosses."""
    shown = [p for p in probes if p.p99_intended is not None]
    return go.Scatter(
        x=[p.rate for p in shown],
        y=[max(p.p99_intended or 0, FLOOR_MS) for p in shown],
        mode="lines+markers",
        name=f"{name} p99 from intended send time",
        legendgroup=name,
        marker={"color": colour, "symbol": "x", "size": 8},
        line={"color": colour, "dash": "dash", "width": 1},
        hovertemplate="%{x:,.0f} msg/s: %{y:,.0f} ms from the schedule",
    )


def capacities_page(set_dir: Path) -> tuple[str, list[str]]:
    doc, searches = read_set(set_dir)
    links = "".join(
        f"<li>{link(set_dir, path, label(found))}: {escape(path.name)}</li>"
        for path, found in searches
    )
    return f"Capacities of {', '.join(dict.fromkeys(label(d) for _, d in searches))}", [
        section(
            "Capacities",
            f"<pre>{escape(doc['table'])}</pre>",
            figure(curves_figure([d for _, d in searches])),
        ),
        section("The searches", f"<ul>{links}</ul>"),
    ]
