"""The site written: every page of a results directory's history, and one copy of plotly.js
beside them, into one directory that any static host (GitHub Pages) serves as it is.

Pages: ``index.html`` (every series' p50 over time, and a line per series),
``<engine>-<stage>-<impl>.html`` per series, ``suites.html`` (the ladders over time) and
``capacity.html`` (capacity over time) when the history has suites or capacity searches.
Each file is written whole (:func:`ground.files.write`).
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from plotly.offline import get_plotlyjs

from ground import files
from ground.errors import HistoryError
from stagebench.history import index
from stagebench.history.entry import Entry
from stagebench.history.series import series_of
from stagebench.report.page import PLOTLY_JS
from stagebench.site import data as site_data
from stagebench.site.pages import (
    CAPACITY,
    OVERVIEW,
    SUITES,
    document,
    linked,
    listing_body,
    overview_body,
    series_body,
)


@dataclass(frozen=True)
class Site:
    path: Path
    pages: int
    steps: int
    bytes: int

    def describe(self) -> str:
        return (
            f"{self.path / OVERVIEW}: {self.pages} pages, {self.steps} steps marked, "
            f"{self.bytes / 1e6:.1f} MB with plotly.js"
        )


def build(results_dir: Path, site_dir: Path, since: str | None = None) -> Site:
    """Write the site of ``results_dir``'s history (from ``since``, ISO UTC, on) into
    ``site_dir``; HistoryError when the history has nothing to draw."""
    entries = index.entries(results_dir, since=since)
    if not entries:
        raise HistoryError(
            f"{results_dir}: the history has no entries to draw"
            + (f" from {since} on" if since else "")
        )
    files.writable_dir(site_dir)
    kinds = {e.kind for e in entries}
    nav = [OVERVIEW] + [SUITES] * ("suite" in kinds) + [CAPACITY] * ("capacity" in kinds)
    pages: dict[str, str] = {}
    listed, rows, steps = [], {}, 0
    for series in series_of(entries):
        data = site_data.series_data(series, results_dir, site_dir)
        pages[f"{series.slug}.html"] = document(series.name, series_body(data), data, nav)
        listed.append(_listed(data))
        rows[series.name] = _p50_row(data["points"])
        steps += sum(len(found) for found in data["steps"].values())
    first, last = entries[0].time, entries[-1].time
    lead = (
        f"{len(entries)} entries of {results_dir.resolve()}, {first} to {last} (UTC); built "
        f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}; a page per engine, stage and implementation."
    )
    overview = {"rows": rows, "title": "p50 of every series", "y_title": "p50 ms (log)"}
    pages[OVERVIEW] = document(
        f"stagebench results: {results_dir.resolve().name}", overview_body(lead, listed),
        overview, nav,
    )  # fmt: skip
    if "suite" in kinds:
        pages[SUITES] = _suites_page(entries, results_dir, site_dir, nav)
    if "capacity" in kinds:
        pages[CAPACITY] = _capacity_page(entries, results_dir, site_dir, nav)
    if not (site_dir / PLOTLY_JS).is_file():
        files.write(site_dir / PLOTLY_JS, get_plotlyjs())
    for name, html in pages.items():
        files.write(site_dir / name, html)
    size = sum((site_dir / name).stat().st_size for name in [*pages, PLOTLY_JS])
    return Site(site_dir, len(pages), steps, size)


def _count(n: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith("h") else "s")
    return f"{n} {noun if n == 1 else plural}"


def _listed(data: dict[str, Any]) -> dict[str, Any]:
    """A series' line on the overview."""
    newest = data["points"][-1]
    counts = [len(data["steps"][stat]) for stat in ("p50", "p99")]
    last = [s for stat in ("p50", "p99") for s in data["steps"][stat]]
    latest = max(last, key=lambda s: s["index"]) if last else None
    steps = f"{counts[0]}, {counts[1]}" + (
        f"; last {latest['stat']} {latest['label']} at {latest['id']}" if latest else ""
    )
    return {"name": data["name"], "slug": data["slug"], "points": len(data["points"]),
            "newest": newest["p50_text"], "commit": newest["commit"],
            "flags": ", ".join(newest["flags"]), "steps": steps}  # fmt: skip


def _p50_row(points: list[dict[str, Any]]) -> dict[str, list[Any]]:
    have = [p for p in points if p["p50"] is not None]
    return {"x": [p["time"] for p in have], "y": [p["p50"] for p in have],
            "plus": [p["p50_plus"] for p in have], "minus": [p["p50_minus"] for p in have],
            "text": [p["id"] for p in have]}  # fmt: skip


def _suites_page(entries: list[Entry], results_dir: Path, site_dir: Path, nav: list[str]) -> str:
    data = site_data.suites_data(entries, results_dir, site_dir)
    rows = [
        [escape(s["time"]), linked(s["id"], s["link"]), str(s["stages"]), escape(s["commit"]),
         escape(", ".join(s["flags"]))]
        for s in reversed(data["suites"])
    ]  # fmt: skip
    lead = (
        f"{_count(len(data['suites']), 'suite')}: each row of their ladders (engine, stage, "
        "implementation), its p50 with its 95 % interval across the suite's rounds."
    )
    body = listing_body(lead, ["time (UTC)", "suite", "rows", "commit", "flags"], rows)
    data |= {"title": "the ladder over time: p50 per row", "y_title": "p50 ms (log)"}
    return document("Suites", body, data, nav)


def _capacity_page(entries: list[Entry], results_dir: Path, site_dir: Path, nav: list[str]) -> str:
    data = site_data.capacity_data(entries, results_dir, site_dir)
    rows = [
        [escape(s["time"]), linked(s["id"], s["link"]), escape(s["capacity"]),
         escape(s["commit"]), escape(", ".join(s["flags"]))]
        for s in reversed(data["searches"])
    ]  # fmt: skip
    lead = (
        f"{_count(len(data['searches']), 'capacity search')}: the rate each engine's stage "
        "passed half the time, with its 95 % interval (else the highest sustainable rate it "
        "found)."
    )
    body = listing_body(lead, ["time (UTC)", "search", "capacity", "commit", "flags"], rows)
    data |= {"title": "capacity over time", "y_title": "msg/s (log)"}
    return document("Capacity searches", body, data, nav)
