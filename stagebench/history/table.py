"""The history of runs as a terminal table: one line per figure, a suite's stages on the
lines under its first, only the columns that say something about the entries listed."""

from collections.abc import Callable, Sequence

from evaluator.recovery.section import figures_text
from evaluator.text.number_format import format_estimate, format_ms
from stagebench.history.entry import Entry, Figure
from stagebench.history.series import STATS, Found, Series, found_steps

Cell = Callable[[Entry, Figure], str]


def _load(e: Entry) -> str:
    rate = "" if e.rate is None else f" {e.rate:,.0f}"
    return f"{e.workload or '-'}{rate}"


def _capacity(e: Entry) -> str:
    """The fitted capacity with its interval, else the bracket the search got to."""
    if e.capacity_mps is not None:
        return f"{format_estimate(e.capacity_mps, e.capacity_ci95_mps)} msg/s"
    low, high = e.capacity_bracket_mps or (None, None)
    if low is None and high is None:
        return "-"
    shown = [("-" if v is None else f"{v:,.0f}") for v in (low, high)]
    return f"{shown[0]}–{shown[1]} msg/s (bracket)"


def _recovery(f: Figure) -> str:
    """Each run's recovery after its disturbances, "-" without any."""
    return ", ".join(figures_text(run) for run in f.recovery) if f.recovery else "-"


def _mark(e: Entry) -> str:
    """UNTRUSTED, else the number of warnings; "" without either."""
    if e.trusted is False:
        return "UNTRUSTED"
    return str(len(e.warnings)) if e.warnings else ""


def _settings(e: Entry) -> str:
    """The settings the user set, by their key alone where that is unambiguous."""
    keys = [name.rpartition(".")[2] for name in e.key_settings]
    return " ".join(
        f"{key if keys.count(key) == 1 else name}={value}"
        for key, (name, value) in zip(keys, e.key_settings.items(), strict=True)
    )


# (header, left-aligned, cell, printed on every figure's line rather than the entry's first)
_COLUMNS: tuple[tuple[str, bool, Cell, bool], ...] = (
    ("time (UTC)", True, lambda e, f: e.time[:16].replace("T", " "), False),
    ("kind", True, lambda e, f: e.kind, False),
    ("stage", True, lambda e, f: f.stage, True),
    ("engine", True, lambda e, f: f.engine or "-", True),
    ("impl", True, lambda e, f: f.impl, True),
    ("load msg/s", True, lambda e, f: _load(e), False),
    ("p50 ms", False, lambda e, f: format_estimate(f.p50, f.p50_ci95), True),
    ("p99 ms", False, lambda e, f: format_estimate(f.p99, f.p99_ci95), True),
    ("capacity", False, lambda e, f: _capacity(e), False),
    ("runs", False, lambda e, f: str(f.runs), True),
    ("steady", True, lambda e, f: f.steady or "-", True),
    ("after a fault", True, lambda e, f: _recovery(f), True),
    ("pace", False, lambda e, f: format_ms(e.pace_ms), False),
    ("!", True, lambda e, f: _mark(e), False),
    ("commit", True, lambda e, f: (e.commit or "-")[:12], False),
    ("settings", True, lambda e, f: _settings(e), False),
    ("directory", True, lambda e, f: e.id, False),
)
NOTES = (
    "p50, p99: mean over the entry's runs of the stage; [lo–hi]: 95 % interval (one run: "
    "within-run precision;\n    several: across the runs); capacity: the rate passed half the "
    "time, else the bracket found;\n    pace: ms one core took for a fixed piece of work; !: "
    "UNTRUSTED, or the number of warnings (--json lists them);\n    after a fault: each run's "
    "time back to its p50 before and, where it settled elsewhere, to a steady level and its "
    "offset;\n    settings: those set by a config file or the command line"
)


def format_history(found: Sequence[Entry]) -> str:
    """The table, its notes, and a line when nothing matched."""
    if not found:
        return "no entries (stagebench history --rebuild indexes the directories again)"
    lines_of = [(e, f, i == 0) for e in found for i, f in enumerate(e.figures or [])]
    body = [
        [cell(e, f) if first or every else "" for _, _, cell, every in _COLUMNS]
        for e, f, first in lines_of
    ]
    headers = [h for h, _, _, _ in _COLUMNS]
    # a column with nothing to say about any line (no capacity search listed) is left out
    keep = [i for i in range(len(headers)) if any(row[i] not in ("", "-") for row in body)]
    headers, left = [headers[i] for i in keep], [_COLUMNS[i][1] for i in keep]
    body = [[row[i] for i in keep] for row in body]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, left, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    entries = f"{len(found)} entr{'y' if len(found) == 1 else 'ies'}"
    return "\n".join(
        [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in body),
         entries, NOTES]
    )  # fmt: skip


def format_steps(all_series: Sequence[Series]) -> str:
    """Each series' steps, with what differs across each; a line when there are none."""
    found = [f for series in all_series for stat in STATS for f in found_steps(series, stat)]
    lines = [line for f in found for line in _step_lines(f)]
    steps = f"{len(found)} step{'' if len(found) == 1 else 's'}"
    return "\n".join([*lines, f"{steps} in {len(all_series)} series (p50 and p99 each)"])


def _step_lines(found: Found) -> list[str]:
    step, at = found.step, found.first
    alone = ", provisional: the newest point alone" if step.provisional else ""
    head = (
        f"{found.series.name} {found.stat}: {format_ms(step.before)} → {format_ms(step.after)} "
        f"ms ({step.change * 100:+,.1f} %, z {step.z:.1f}) from {at.entry.id} "
        f"(point {step.index + 1} of {len(found.points)}{alone})"
    )
    return [head, *(f"    {line}" for line in found.differs or ["nothing recorded differs"])]
