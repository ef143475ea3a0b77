"""The stage table as a newcomer first reads it: per stage its p50 with the interval, its
p99, the increment of p50 over the stage below with its interval and a verdict in a
word, and one flag column; a one-line key, what one round cannot tell, and the rows'
warnings as one short line per cause (in full: ``--wide``, summary.json, report.html).
"""

from evaluator.comparison.compare import Comparison
from evaluator.comparison.engines import EngineDifference
from evaluator.comparison.increments import MARK, MIN_RUNS, WITHIN_RUN
from evaluator.comparison.result import ComparisonRow
from evaluator.text.number_format import format_estimate, format_ms

HEADERS = ("stage", "p50 ms [95 %]", "p99 ms", "+p50 ms [95 %]", "over", "verdict", MARK)
LEFT = (True, False, False, False, True, True, True)
KEY = (
    "+p50: p50 minus that of the stage under 'over' (what the stage adds); a verdict's "
    "[lo–hi] holds jointly with the table's others at 95 %, and it is significant exactly "
    "when that excludes 0; --wide: every column, notes, warnings in full"
)
CAUSE_CHARS = 60
"""A warning's cause is its text up to the first colon, cut at this length."""


def compact_table(comparison: Comparison) -> list[str]:
    """The table's lines, every one of them within 100 characters for a ladder of one
    engine's stage names."""
    rows = comparison.rows
    several = len({r.engine for r in rows if r.increment_over is not None}) > 1
    causes = _causes(rows, several)
    body = [_cells(r, several, causes) for r in rows]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(HEADERS)]

    def line(cells: tuple[str, ...] | list[str]) -> str:
        padded = zip(cells, widths, LEFT, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    lines = [line(HEADERS), "  ".join("-" * w for w in widths), *map(line, body)]
    lines += between_engines(comparison, ("p50",))
    lines += _wrap(KEY)
    if comparison.resolution is not None:
        lines += _wrap(comparison.resolution.text())
    if any(r.increment_p50_method == WITHIN_RUN for r in rows):
        lines += _wrap(
            "unjudged: one run of a stage says nothing of run-to-run variation; suite "
            f"--repeat {MIN_RUNS} gives verdicts and takes {MIN_RUNS} times as long as one round"
        )
    for r in rows:
        if r.first_update_p50 is not None:
            lines += _wrap(
                f"{row_label(r, several)}: written at every update (p50, p99: complete "
                f"ones); first update p50 {format_ms(r.first_update_p50)}, p99 "
                f"{format_ms(r.first_update_p99)} ms"
            )
    for number, (cause, labels) in enumerate(causes.items(), 1):
        lines += _wrap(f"{MARK}{number} {cause}: {', '.join(labels)}")
    return lines


def between_engines(comparison: Comparison, quantiles: tuple[str, ...]) -> list[str]:
    """One line per pair of engines on a stage: the difference of each of ``quantiles``
    with its interval and verdict; none without such pairs."""
    if not comparison.engines:
        return []
    lines = ["between engines, on the same stage and kind of operator (ms):"]
    for pair in comparison.engines:
        impl = pair.impl.removeprefix("builtin")
        name = pair.stage + (impl if not impl or impl.startswith("@") else f"/{impl}")
        cells = []
        for q in quantiles:
            value = getattr(pair, q)
            shown = format_estimate(value, judged_interval(pair, q), signed=True)
            method, significant = getattr(pair, f"{q}_method"), getattr(pair, f"{q}_significant")
            word = _word(value, method, significant)
            cells.append(f"{q} {shown}" + (f" {word}" if word else ""))
        lines.append(f"  {name}: {pair.engine} − {pair.over} " + "; ".join(cells))
    return lines


def judged_interval(item: ComparisonRow | EngineDifference, key: str) -> list[float] | None:
    """The interval shown beside ``key``'s verdict: the one it was made with (jointly
    with the table's tests), else, without a verdict, its own 95 % interval."""
    joint: list[float] | None = getattr(item, f"{key}_ci95_joint")
    return joint if joint is not None else getattr(item, f"{key}_ci95")


def _word(value: float | None, method: str | None, significant: bool | None) -> str:
    """The verdict on a difference in a word ("" without one)."""
    if value is None:
        return ""
    if method == WITHIN_RUN:
        return "unjudged"
    if significant is None:
        return ""
    return "significant" if significant else "within noise"


def row_label(row: ComparisonRow, engine: bool) -> str:
    """ "join", "tumbling/custom", "ingest@real-time"; "flink:join" with ``engine``."""
    impl = row.impl.removeprefix("builtin")
    name = row.stage + (impl if not impl or impl.startswith("@") else f"/{impl}")
    return f"{row.engine}:{name}" if engine and row.engine and row.increment_over else name


def _over(row: ComparisonRow) -> str:
    """The stage the increment is over, without its engine and built-in impl."""
    over = (row.increment_over or "").rpartition(":")[2]
    return over.removesuffix("/builtin") or "-"


def _verdict(row: ComparisonRow) -> str:
    word = _word(row.increment_p50, row.increment_p50_method, row.increment_p50_significant)
    return word or ("-" if row.increment_p50 is not None else "")


def _cells(row: ComparisonRow, several: bool, causes: dict[str, list[str]]) -> list[str]:
    label = row_label(row, several)
    flags = [str(n) for n, labels in enumerate(causes.values(), 1) if label in labels]
    return [
        label,
        format_estimate(row.p50, row.p50_ci95),
        format_ms(row.p99),
        format_estimate(row.increment_p50, judged_interval(row, "increment_p50"), signed=True)
        if row.increment_p50 is not None
        else "-",
        _over(row),
        _verdict(row),
        MARK + ",".join(flags) if flags else "",
    ]


def _causes(rows: list[ComparisonRow], several: bool) -> dict[str, list[str]]:
    """Each cause of the rows' warnings (a warning up to its first colon, its run's
    directory left out) → the rows that have it, in table order."""
    out: dict[str, list[str]] = {}
    for row in rows:
        for warning in row.warnings:
            text = next(
                (warning.removeprefix(f"{d}: ") for d in row.run_dirs if warning.startswith(d)),
                warning,
            )
            cause = text.split(": ", 1)[0]
            if len(cause) > CAUSE_CHARS:
                cause = cause[: CAUSE_CHARS - 1].rstrip() + "…"
            labels = out.setdefault(cause, [])
            if (label := row_label(row, several)) not in labels:
                labels.append(label)
    return out


def _wrap(text: str, width: int = 100) -> list[str]:
    """``text`` in lines of at most ``width`` characters, the later ones indented."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line]
