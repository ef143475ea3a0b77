"""report.html's frame: the document with plotly.js, its style, and how a plot (or the
note that stands for one without data), a section and a link to another page go into it.

plotly.js (about 4.8 MB) is written once beside the results directories a page is among,
``plotly-<version>.min.js``, and every page of them loads it from there, so a suite's
pages and its runs' share one copy; a self-contained page embeds it instead, to be
mailed or opened alone. Every plot is a div whose script uses it.
"""

import os
from html import escape
from pathlib import Path

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs, get_plotlyjs_version

from ground import files, rundir

PLOTLY_JS = f"plotly-{get_plotlyjs_version()}.min.js"
"""plotly.js as written beside the results directories."""
MISSING = (
    "<script>if (!window.Plotly) document.addEventListener('DOMContentLoaded', () => "
    "document.body.insertAdjacentHTML('afterbegin', '<p class=\"note\">The charts need "
    f"{PLOTLY_JS} in the directory above this page&#39;s; <code>stagebench report "
    "--self-contained DIR</code> draws a page that carries it.</p>'))</script>"
)
"""A page that finds no plotly.js says so above its sections."""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; } th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.warnings li { color: #a33; } .ok { color: #282; } .lead { color: #555; }
dl.conditions { display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }
dt { font-weight: 600; } dd { margin: 0; }
.badge { padding: 2px 8px; border-radius: 4px; color: white; font-size: 0.8em; }
.trusted { background: #2a7; } .untrusted { background: #c33; }
.note { color: #555; font-style: italic; }
"""


def document(title: str, body: list[str], page_dir: Path, self_contained: bool = False) -> str:
    """The whole page of ``page_dir``: plotly.js in the head (embedded, or loaded from
    beside the results directories), then the sections."""
    if self_contained:
        script = f'<script type="text/javascript">{get_plotlyjs()}</script>'
    else:
        shared = page_dir.resolve().parent / PLOTLY_JS
        if not shared.is_file():
            files.write(shared, get_plotlyjs())
        script = f'<script src="../{PLOTLY_JS}"></script>{MISSING}'
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style>{script}</head>"
        f"<body><h1>{escape(title)}</h1>{''.join(body)}</body></html>\n"
    )


def figure(fig: go.Figure, missing: str = "") -> str:
    """The plot; a figure without data is left out for the note ``missing`` (why it has
    none)."""
    if not fig.data and missing:
        return f'<p class="note">{escape(missing)}</p>'
    html: str = fig.to_html(
        full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True}
    )
    return html


def section(heading: str, *parts: str) -> str:
    return f"<section><h2>{escape(heading)}</h2>{''.join(parts)}</section>"


def link(page_dir: Path, run_dir: Path, text: str) -> str:
    """A link to the run's page; its name alone, and how to draw it, when it has none."""
    page = run_dir / rundir.REPORT_HTML
    if not page.is_file():
        draw = f"<code>stagebench report {escape(run_dir.name)}</code>"
        return f"{escape(text)} (no page yet: {draw} draws it)"
    href = Path(os.path.relpath(page, page_dir)).as_posix()
    return f'<a href="{escape(href)}">{escape(text)}</a>'
