"""report.html's frame: the document with plotly.js embedded once, its style, and how a
plot, a section and a link to another page go into it.

plotly.js (about 4.8 MB) sits once in the page's head and every plot is a div whose
script uses it, so the page works offline as one file.
"""

import os
from html import escape
from pathlib import Path

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from ground import rundir

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
"""


def document(title: str, body: list[str]) -> str:
    """The whole page: plotly.js once in the head, then the sections."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script></head>'
        f"<body><h1>{escape(title)}</h1>{''.join(body)}</body></html>\n"
    )


def figure(fig: go.Figure) -> str:
    html: str = fig.to_html(
        full_html=False, include_plotlyjs=False, config={"displaylogo": False, "responsive": True}
    )
    return html


def section(heading: str, *parts: str) -> str:
    return f"<section><h2>{escape(heading)}</h2>{''.join(parts)}</section>"


def link(page_dir: Path, run_dir: Path, text: str) -> str:
    href = Path(os.path.relpath(run_dir / rundir.REPORT_HTML, page_dir)).as_posix()
    return f'<a href="{escape(href)}">{escape(text)}</a>'
