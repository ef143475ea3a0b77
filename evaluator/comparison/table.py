"""The stage table as text: a terminal table and the same in Markdown, with what its
numbers mean and its rows' warnings underneath (the numbers: :mod:`evaluator.comparison.compare`,
each formatted by :mod:`evaluator.text.number_format`)."""

from collections import Counter
from collections.abc import Callable

from evaluator.comparison.compact import between_engines, compact_table, judged_interval
from evaluator.comparison.compare import Comparison
from evaluator.comparison.increments import ACROSS_RUNS, MARK, NO_VERDICT, PAIRED, WELCH, WITHIN_RUN
from evaluator.comparison.result import ComparisonRow
from evaluator.comparison.rows import CI_QUANTILES
from evaluator.recovery.section import FIGURES, figures_text
from evaluator.statistics.significance import ALPHA
from evaluator.text.number_format import format_cell, format_estimate, format_ms

INCREMENT_NOTE = (
    "the stage's pXX − that of the stage under 'over' (difference of percentiles, ms; in "
    "rounds: the mean of the per-round differences)"
)


def _estimate(row: ComparisonRow, q: str) -> str:
    return format_estimate(getattr(row, q), getattr(row, f"{q}_ci95"))


def _increment_cell(row: ComparisonRow, q: str) -> str:
    """The increment and the interval its verdict was made with; "n.s." when not
    significant, "n.v." without a verdict (:data:`NO_VERDICT`)."""
    cell = format_estimate(
        getattr(row, f"increment_{q}"), judged_interval(row, f"increment_{q}"), signed=True
    )
    if getattr(row, f"increment_{q}_significant") is False:
        return cell + " n.s."
    return cell + (" n.v." if getattr(row, f"increment_{q}_method") == WITHIN_RUN else "")


def steady_text(verdicts: list[str | None]) -> str | None:
    """The steadiness of a row's runs: one run, its verdict; several, "3 steady" or
    "2 steady, 1 rising"; None when no run recorded one."""
    if all(v is None for v in verdicts):
        return None
    if len(verdicts) == 1:
        return verdicts[0]
    counts = Counter(v or "unknown" for v in verdicts)
    return ", ".join(f"{n} {v}" for v, n in counts.items())


# (header, left-aligned, cell of a row)
_COLUMNS: tuple[tuple[str, bool, Callable[[ComparisonRow], str]], ...] = (
    ("stage", True, lambda r: r.stage),
    ("impl", True, lambda r: r.impl),
    ("p50", False, lambda r: _estimate(r, "p50")),
    ("p95", False, lambda r: format_ms(r.p95)),
    ("p99", False, lambda r: _estimate(r, "p99")),
    ("+p50", False, lambda r: _increment_cell(r, "p50")),
    ("+p95", False, lambda r: format_ms(r.increment_p95, signed=True)),
    ("+p99", False, lambda r: _increment_cell(r, "p99")),
    ("over", True, lambda r: r.increment_over or "-"),
    ("runs", False, lambda r: format_cell(r.repetitions)),
    ("pace", False, lambda r: format_ms(r.pace_ms)),
    ("steady", True, lambda r: steady_text(r.steady) or "-"),
)


def _body(rows: list[ComparisonRow]) -> tuple[list[str], list[list[str]]]:
    """Headers and cells of the rows; the last column, "!N", refers to the Nth row
    with warnings (listed under the table by :func:`_warned`)."""
    headers = [h for h, _, _ in _COLUMNS] + [MARK]
    cells, warned = [], 0
    for r in rows:
        mark = ""
        if r.warnings:
            warned += 1
            mark = f"{r.mark or MARK}{warned}"
        cells.append([cell(r) for _, _, cell in _COLUMNS] + [mark])
    return headers, cells


def _notes(comparison: Comparison) -> list[list[str]]:
    """What the numbers mean, as notes of a few short phrases each: units, the
    interval methods present, increments with how they were judged, pace,
    steadiness, the marks."""
    rows = comparison.rows
    methods: set[str] = {r.ci_method for r in rows if r.ci_method}
    explained = {
        WITHIN_RUN: "one run: batch means over sections of its seconds (within-run precision only)",
        ACROSS_RUNS: "several runs: Student-t interval of the runs' mean (run-to-run variation)",
    }
    if methods:
        intervals = ["[lo–hi]: 95 % interval;", *(explained[m] for m in sorted(methods))]
    else:
        intervals = ["no intervals: the runs' summaries have none (periods too short)"]
    judged = {getattr(r, f"increment_{q}_method") for r in rows for q in CI_QUANTILES}
    how = {
        PAIRED: "in rounds: [lo–hi] Student-t on the per-round differences;",
        WELCH: "runs made apart: [lo–hi] Welch–Satterthwaite on the runs' values;",
        WITHIN_RUN: f"n.v.: no verdict, {NO_VERDICT};",
    }
    increments = [f"+pXX: {INCREMENT_NOTE};", *(how[m] for m in how if m in judged)]
    if comparison.tests:
        increments.append(
            f"a verdict's [lo–hi] holds jointly with the table's other {comparison.tests - 1} "
            f"tested ones at {(1 - ALPHA) * 100:.0f} % (Bonferroni); n.s.: not significant, "
            "that interval holds 0;"
        )
    if comparison.resolution is not None:
        increments.append(comparison.resolution.text())
    increments[-1] = increments[-1].rstrip(";")
    pace = ["pace: ms one core took for a fixed piece of work around the runs (lower: a "
            "faster host; -: not recorded);"]  # fmt: skip
    spread, drift = comparison.pace_spread, comparison.pace_drift
    if spread is not None and drift is not None:
        pace.append(
            f"across the runs a median absolute deviation of {spread * 100:.1f} "
            f"% of the median: two runs' paces differ by up to {drift * 100:.0f} %;"
        )
    updated = [
        f"{r.stage}/{r.impl}: first update p50 {format_ms(r.first_update_p50)} ms, p99 "
        f"{format_ms(r.first_update_p99)} ms, {r.updates_per_window or 0:.1f} updates per window;"
        for r in rows
        if r.first_update_p50 is not None
    ]
    if updated:
        updated = [
            "written at every update: pXX is each window's complete update, from the latest "
            "of its inputs; its first update is measured from the latest input it carries;",
            *updated,
        ]
        updated[-1] = updated[-1].rstrip(";")
    recovered = [
        f"{r.stage}/{r.impl}: {', '.join(_recovery_texts(r))};"
        for r in rows
        if r.recovery_s is not None
    ]
    if recovered:
        recovered = [
            "after the disturbances, run by run (the medians over each run's windows): "
            "recovered to within the threshold of the p50 before; settled at a steady level "
            "where that was another time, and its offset from before;",
            *recovered,
        ]
        recovered[-1] = recovered[-1].rstrip(";")
    return [
        ["latency in ms; p50, p95, p99: mean over the runs;", *intervals],
        increments,
        *([updated] if updated else []),
        *([recovered] if recovered else []),
        [*pace, "steady: each run's verdict on its per-second p50 trend (-: not recorded);",
         f"{MARK}N: warning N below"],
    ]  # fmt: skip


def _recovery_texts(row: ComparisonRow) -> list[str]:
    """Each run's recovery figures in words (:func:`evaluator.recovery.section.figures_text`)."""
    columns = [getattr(row, key) or [] for key in FIGURES]
    return [
        figures_text(dict(zip(FIGURES, run, strict=True))) for run in zip(*columns, strict=True)
    ]


def _warned(rows: list[ComparisonRow]) -> list[tuple[str, list[str]]]:
    """("stage/impl", its warnings) of every row with warnings, in table order."""
    return [(f"{r.stage}/{r.impl}", list(r.warnings)) for r in rows if r.warnings]


def format_table(comparison: Comparison, wide: bool = False) -> str:
    """A plain text table for terminals: the differences between the runs above it
    (when any); below it a key and the rows' warnings, one line per cause
    (:func:`compact_table`), or with ``wide`` every column, notes on each and every
    warning in full."""
    if not wide:
        return "\n".join([*_above(comparison), *compact_table(comparison)])
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, left, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    lines = [*_above(comparison), line(headers), "  ".join("-" * w for w in widths)]
    lines += [line(b) for b in body]
    lines += between_engines(comparison, CI_QUANTILES)
    lines += ["\n    ".join(note) for note in _notes(comparison)]
    for i, (label, warnings) in enumerate(_warned(comparison.rows), 1):
        lines.append(f"{MARK}{i} {label}:")
        lines += [f"    {w}" for w in warnings]
    return "\n".join(lines)


def _above(comparison: Comparison) -> list[str]:
    """What must be read before the table: runs that differ, a host that drifted."""
    lines = []
    if comparison.differences:
        lines.append(
            "NOT COMPARABLE: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines += [f"  {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"PACE: {note}", ""]
    return lines


def to_markdown(comparison: Comparison) -> str:
    """The same table in Markdown."""
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    lines = []
    if comparison.differences:
        lines.append(
            "**NOT COMPARABLE**: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines.append("")
        lines += [f"- {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"**PACE**: {note}", ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "".join("---|" if a else "---:|" for a in left))
    lines += ["| " + " | ".join(b) + " |" for b in body]
    lines.append("")
    if pairs := between_engines(comparison, CI_QUANTILES):
        lines += [pairs[0], "", *(f"- {p.strip()}" for p in pairs[1:]), ""]
    lines += [f"- {' '.join(note)}" for note in _notes(comparison)]
    warned = _warned(comparison.rows)
    if warned:
        lines += ["", "Warnings:", ""]
        for i, (label, warnings) in enumerate(warned, 1):
            lines.append(f"{i}. {label} ({MARK}{i}):")
            lines += [f"   - {w}" for w in warnings]
    return "\n".join(lines)
