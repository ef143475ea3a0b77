"""What the site's pages draw, as JSON-ready dicts: pure functions of the history's series
(:mod:`stagebench.history.series`), their steps and the results directory's layout.

A series page gets every point (its time, commit, engine version and settings, for the
x-axis and the filters; its p50 and p99 with their 95 % intervals; why it deserves less
trust; a relative link to its report.html; the commands to run it again) and the steps
of its p50 and p99 with what differs across each.
"""

import os
from pathlib import Path
from typing import Any

from evaluator.text.number_format import format_estimate
from ground import rundir
from stagebench.history.entry import Entry
from stagebench.history.series import NOT_COMPARED, STATS, Found, Point, Series, found_steps
from stagebench.site import rerun


def report_link(results_dir: Path, site_dir: Path, entry_id: str) -> str | None:
    """The entry's report.html relative to the site's pages; None when it has none."""
    page = results_dir / entry_id / rundir.REPORT_HTML
    if not page.is_file():
        return None
    return Path(os.path.relpath(page.resolve(), site_dir.resolve())).as_posix()


def point_data(point: Point, index: int, link: str | None) -> dict[str, Any]:
    """One point as its page draws and lists it."""
    entry, figure = point.entry, point.figure
    out: dict[str, Any] = {
        "index": index, "id": entry.id, "kind": entry.kind, "time": entry.time,
        "commit": entry.commit or "-", "version": point.engine_version or "-",
        "settings": entry.settings, "flags": point.flags, "link": link,
        "checkout": rerun.checkout(entry), "command": rerun.command(entry, figure),
        "machine": entry.machine or "-",
        "pace_ms": entry.pace_ms, "steady": figure.steady or "-",
    }  # fmt: skip
    for stat in STATS:
        value, ci = point.value(stat), point.interval(stat)
        out[stat] = value
        out[f"{stat}_text"] = format_estimate(value, ci) if value is not None else "-"
        out[f"{stat}_plus"] = max(ci[1] - value, 0.0) if ci and value is not None else 0.0
        out[f"{stat}_minus"] = max(value - ci[0], 0.0) if ci and value is not None else 0.0
    return out


def step_data(found: Found, index_of: dict[str, int]) -> dict[str, Any]:
    """A step: where (the index of its first point among all the series' points), by how
    much, and what differs across it."""
    step = found.step
    return {
        "stat": found.stat, "index": index_of[found.first.entry.id], "id": found.first.entry.id,
        "before_id": found.last_before.entry.id, "before": step.before, "after": step.after,
        "change": step.change, "z": step.z, "provisional": step.provisional,
        "differs": found.differs, "label": f"{step.change:+.0%}",
    }  # fmt: skip


def series_data(series: Series, results_dir: Path, site_dir: Path) -> dict[str, Any]:
    """Everything a series page draws: its points, its steps and the settings to filter by
    (those with two values or more among its points)."""
    index_of = {p.entry.id: i for i, p in enumerate(series.points)}
    points = [
        point_data(p, i, report_link(results_dir, site_dir, p.entry.id))
        for i, p in enumerate(series.points)
    ]
    values: dict[str, set[str]] = {}
    for point in series.points:
        for key, value in point.entry.settings.items():
            values.setdefault(key, set()).add(value)
    # a setting with one known value, that older results did not record, filters nothing
    filters = {k: sorted(v) for k, v in sorted(values.items()) if len(v) > 1}
    return {
        "name": series.name, "slug": series.slug, "points": points,
        "steps": {stat: [step_data(f, index_of) for f in found_steps(series, stat)]
                  for stat in STATS},
        "filters": {k: v for k, v in filters.items() if k not in NOT_COMPARED},
    }  # fmt: skip


def suites_data(entries: list[Entry], results_dir: Path, site_dir: Path) -> dict[str, Any]:
    """The suites over time: each row of their ladders (engine, stage, implementation) a
    line of p50 by the suite's time, and each suite's link."""
    suites = [e for e in entries if e.kind == "suite"]
    rows: dict[str, dict[str, list[Any]]] = {}
    for suite in suites:
        for f in suite.figures:
            row = rows.setdefault(f"{f.engine or 'several'} {f.stage} {f.impl}", _empty())
            _add(row, suite.time, f.p50, f.p50_ci95, suite.id)
    return {
        "rows": rows,
        "suites": [_listed(e, results_dir, site_dir) | {"stages": len(e.figures)} for e in suites],
    }


def capacity_data(entries: list[Entry], results_dir: Path, site_dir: Path) -> dict[str, Any]:
    """Each engine's and stage's capacity over time: the fitted rate with its interval,
    or the highest sustainable rate found when the search fitted none."""
    searches = [e for e in entries if e.kind == "capacity"]
    rows: dict[str, dict[str, list[Any]]] = {}
    for search in searches:
        f = search.figures[0]
        row = rows.setdefault(f"{f.engine or 'several'} {f.stage} {f.impl}", _empty())
        value = search.capacity_mps
        if value is None and search.capacity_bracket_mps:
            value = search.capacity_bracket_mps[0]
        _add(row, search.time, value, search.capacity_ci95_mps, search.id)
    listed = [_listed(e, results_dir, site_dir) | {"capacity": _capacity_text(e)} for e in searches]
    return {"rows": rows, "searches": listed}


def _empty() -> dict[str, list[Any]]:
    return {"x": [], "y": [], "plus": [], "minus": [], "text": []}


def _add(
    row: dict[str, list[Any]], x: str, y: float | None, ci: list[float] | None, text: str
) -> None:
    row["x"].append(x)
    row["y"].append(y)
    row["plus"].append(max(ci[1] - y, 0.0) if ci and y is not None else 0.0)
    row["minus"].append(max(y - ci[0], 0.0) if ci and y is not None else 0.0)
    row["text"].append(text)


def _listed(entry: Entry, results_dir: Path, site_dir: Path) -> dict[str, Any]:
    return {
        "id": entry.id, "time": entry.time, "commit": entry.commit or "-",
        "link": report_link(results_dir, site_dir, entry.id),
        "flags": (["untrusted"] if entry.trusted is False else [])
        + ([f"{len(entry.warnings)} warnings"] if entry.warnings else []),
    }  # fmt: skip


def _capacity_text(entry: Entry) -> str:
    if entry.capacity_mps is not None:
        return f"{format_estimate(entry.capacity_mps, entry.capacity_ci95_mps)} msg/s"
    low, high = entry.capacity_bracket_mps or (None, None)
    return f"{low or '-'}–{high or '-'} msg/s (bracket)"
