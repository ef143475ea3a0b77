"""A short terminal table of evaluated runs: latency with its intervals, steadiness,
completeness, and each run's warnings underneath."""

from collections.abc import Callable
from typing import Any

from evaluator.model.result import Summary
from evaluator.recovery.section import cause_text, settled_text, statistic
from evaluator.text.number_format import format_cell, format_estimate, format_ms


def _with_interval(summary: Summary, q: str) -> str:
    """pXX, then its 95 % within-run interval when the run has one: "101 [98–105]", as
    the stage table prints it."""
    return format_estimate(summary.latency_ms[q], (summary.confidence or {}).get(q))


def _steady(summary: Summary) -> str:
    """The steadiness verdict, with the slope when not steady; "-" when not recorded."""
    steady = summary.steady_state
    if not steady:
        return "-"
    if steady["verdict"] == "steady":
        return "steady"
    return f"{steady['verdict']} {steady['slope_ms_per_min']:+,.0f} ms/min"


COLUMNS: list[tuple[str, Callable[[Summary], Any]]] = [
    ("stage", lambda s: s.run["stage"]),
    ("impl", lambda s: s.run["impl"]),
    ("outputs", lambda s: s.records.outputs),
    ("missing", lambda s: s.records.missing),
    ("dup", lambda s: s.records.duplicates),
    ("p50 ms", lambda s: _with_interval(s, "p50")),
    ("p95 ms", lambda s: format_ms(s.latency_ms["p95"])),
    ("p99 ms", lambda s: _with_interval(s, "p99")),
    ("max ms", lambda s: format_ms(s.latency_ms["max"])),
    ("steady", _steady),
    ("checks", lambda s: "-" if s.trusted is None else "ok" if s.trusted else "UNTRUSTED"),
]
NOTE = (
    "[lo–hi]: 95 % interval of the run's percentile ({method}); steady: trend of the "
    "per-second p50 over the measured period; checks: every output's input timestamps, "
    "count and values agree with its inputs"
)
"""The table's legend; ``method`` is the intervals' own, as summary.json states it."""
COMPACT = ("stage", "impl", "outputs", "missing", "dup", "p50 ms", "p99 ms", "steady", "checks")
"""The columns shown unless ``--wide``."""
SHORT_NOTE = (
    "[lo–hi]: 95 % interval; steady: the per-second p50's trend; checks: outputs agree "
    "with their inputs"
)


def _recovery(summary: Summary) -> list[str]:
    """Lines on the disturbances (bursts, a fault): the recovery after them, and where the
    latency settled after each window that settled at a new level, with its cause."""
    after = summary.recovery
    if not after or not after["windows"]:
        return []
    kinds = ", ".join(sorted({w["kind"] for w in after["windows"]}))
    s = after["summary"]
    median, worst = s["recovery_s_median"], s["recovery_s_max"]
    times = "never" if median is None else f"median {median:g} s, max {worst:g} s"
    stat = statistic(after["windows"])
    lines = [
        f"{summary.run['stage']}: {s['windows']} disturbance(s) ({kinds}): recovered "
        f"{s['recovered']} of {s['windows']} to within {after['threshold'] * 100:g} % of the "
        f"{stat} before ({times} after the end); peak per-second {stat} "
        f"{format_ms(s['peak_ms_max'])} ms"
    ]
    # a fault's window, or one after which the latency settled elsewhere, with its own line
    for window in after["windows"]:
        if window.get("process") or window.get("level") == "new":
            parts = [settled_text(window), cause_text(window)]
            if any(parts):
                lines.append("    " + "; ".join(p for p in parts if p))
    return lines


def _unreferenced(summary: Summary) -> list[str]:
    """A user's job: the measured inputs no output named."""
    records = summary.records
    if records.unreferenced_inputs is None:
        return []
    return [
        f"{summary.run['stage']}: {records.unreferenced_inputs:,} of {records.inputs_measured:,} "
        "measured inputs named by no output (a filter's drops, or outputs never written)"
    ]


def format_runs(summaries: list[Summary], wide: bool = False) -> str:
    """The runs' table; by default its main columns, a one-line key and each warning's
    cause (within 100 characters), with ``wide`` every column and note and every warning
    in full."""
    columns = COLUMNS if wide else [c for c in COLUMNS if c[0] in COMPACT]
    header = [name for name, _ in columns]
    body = [[format_cell(get(s)) for _, get in columns] for s in summaries]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in body]
    if any(s.confidence or s.steady_state for s in summaries):
        methods = sorted({s.confidence["method"] for s in summaries if s.confidence})
        lines.append(NOTE.format(method="; ".join(methods) or "none") if wide else SHORT_NOTE)
    lines += [line for s in summaries for line in _recovery(s)]
    lines += [line for s in summaries for line in _unreferenced(s)]
    warnings = [w for s in summaries for w in s.warnings]
    if wide:
        lines += [f"WARNING: {w}" for w in warnings]
    else:
        causes = dict.fromkeys(w.split(": ", 1)[0] for w in warnings)
        lines += [f"WARNING: {c} (in full: --wide, summary.json, report.html)" for c in causes]
    return "\n".join(lines)
