"""The site's pages as HTML: the overview, a page per series, the suites and the capacity
searches. Each page carries its data as JSON and the script that draws it
(:mod:`stagebench.site.script`); plotly.js is one file beside the pages."""

import json
from html import escape
from typing import Any

from stagebench.report.page import PLOTLY_JS, STYLE
from stagebench.site.script import SCRIPT

OVERVIEW, SUITES, CAPACITY = "index.html", "suites.html", "capacity.html"
_NAV = ((OVERVIEW, "overview"), (SUITES, "suites"), (CAPACITY, "capacity searches"))
SITE_STYLE = """
nav a { margin-right: 1em; } .controls { margin: 0.8em 0; } .controls label { margin-right: 1em; }
#point { background: #f7f7f7; padding: 0.4em 1em; border-left: 4px solid #1f77b4; }
pre { white-space: pre-wrap; } td.flags { color: #a33; } .step { color: #c60; }
"""
MISSING = (
    "<script>if (!window.Plotly) document.addEventListener('DOMContentLoaded', () => "
    "document.body.insertAdjacentHTML('afterbegin', '<p class=\"note\">The charts need "
    f"{PLOTLY_JS} beside this page; <code>stagebench site</code> writes it.</p>'))</script>"
)
MARKS = (
    "A red × is a point whose run was untrusted, warned or not steady (the hover names "
    "which); bars are 95 % intervals; a dashed orange line is a step, a change of level "
    "that the test of <code>stagebench history --steps</code> found (docs/results.md)."
)


def document(title: str, body: list[str], data: dict[str, Any], nav: list[str]) -> str:
    """A whole page: plotly.js from beside it, the links between pages, the body, the
    page's data and the script that draws it."""
    links = " ".join(f'<a href="{page}">{escape(text)}</a>' for page, text in _NAV if page in nav)
    payload = json.dumps(data).replace("</", "<\\/")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}{SITE_STYLE}</style>"
        f'<script src="{PLOTLY_JS}"></script>{MISSING}</head>'
        f"<body><nav>{links}</nav><h1>{escape(title)}</h1>{''.join(body)}"
        f'<script type="application/json" id="site-data">{payload}</script>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A table of cells already escaped (they may hold links)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def linked(text: str, href: str | None) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>' if href else escape(text)


def overview_body(lead: str, listed: list[dict[str, Any]]) -> list[str]:
    """The overview: every series' p50 in one plot, and a line per series with its
    newest point and its steps."""
    rows = [
        [linked(s["name"], f"{s['slug']}.html"), str(s["points"]), escape(s["newest"]),
         escape(s["commit"]), f'<span class="flags">{escape(s["flags"])}</span>',
         f'<span class="step">{escape(s["steps"])}</span>']
        for s in listed
    ]  # fmt: skip
    headers = ["engine stage impl", "points", "newest p50 ms", "commit", "newest's flags",
               "steps (p50, p99)"]  # fmt: skip
    return [
        f'<p class="lead">{escape(lead)}</p><p class="lead">{MARKS}</p>',
        '<div id="rows"></div><h2>Series</h2>',
        table(headers, rows),
    ]


def series_body(data: dict[str, Any]) -> list[str]:
    """A series page: the controls, p50 and p99 over time, the point clicked, the steps
    and every point with how to run it again."""
    filters = "".join(
        f'<label>{escape(key)} <select class="filter" data-key="{escape(key)}">'
        '<option value="">all</option>'
        + "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
        + "</select></label>"
        for key, values in data["filters"].items()
    )
    controls = (
        '<div class="controls"><label>x-axis <select id="axis"><option value="time">time'
        '</option><option value="commit">commit</option><option value="version">engine '
        f'version</option></select></label>{filters}<span id="shown"></span></div>'
    )
    return [
        f'<p class="lead">{MARKS} Filters leave the steps where the whole series has them.</p>',
        controls, '<div id="p50"></div><div id="p99"></div>',
        '<div id="point"><p>Click a point for its report and how to run it again.</p></div>',
        "<h2>Steps</h2>", _steps_table(data), "<h2>Points</h2>", _points_table(data),
    ]  # fmt: skip


def _steps_table(data: dict[str, Any]) -> str:
    steps = [s for stat in ("p50", "p99") for s in data["steps"][stat]]
    if not steps:
        return '<p class="note">No step: the series stays within its run-to-run spread.</p>'
    rows = [
        [s["stat"], escape(s["id"]) + (" (provisional: the newest point alone)"
                                        if s["provisional"] else ""),
         f"{s['before']:,.4g} → {s['after']:,.4g} ms", f"{s['change']:+.1%}", f"{s['z']:.1f}",
         "<br>".join(escape(d) for d in s["differs"]) or "nothing recorded differs"]
        for s in steps
    ]  # fmt: skip
    return table(["stat", "first point of the new level", "level", "change", "z",
                  "what differs across it"], rows)  # fmt: skip


def _points_table(data: dict[str, Any]) -> str:
    rows = [
        [escape(p["time"]), linked(p["id"], p["link"]), p["kind"], escape(p["commit"]),
         escape(p["version"]), escape(p["p50_text"]), escape(p["p99_text"]),
         f'<span class="flags">{escape(", ".join(p["flags"]))}</span>',
         f"<code>{escape(p['checkout'])}<br>{escape(p['command'])}</code>"]
        for p in reversed(data["points"])
    ]  # fmt: skip
    return table(["time (UTC)", "directory", "kind", "commit", "engine version", "p50 ms",
                  "p99 ms", "flags", "run it again"], rows)  # fmt: skip


def listing_body(lead: str, headers: list[str], rows: list[list[str]]) -> list[str]:
    """The suites' or the capacity searches' page: their plot, then a line each."""
    return [f'<p class="lead">{escape(lead)}</p><div id="rows"></div>', table(headers, rows)]
