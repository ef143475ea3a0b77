"""The terminal side of an A/B comparison and of the regression check (their maths:
:mod:`evaluator.comparison.ab`): a table of the changes with what differs between the sides above
it, and the regression check's one line and JSON."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluator.comparison.ab import WITHHELD, ABComparison, Change, Regression
from evaluator.comparison.increments import WITHIN_RUN
from evaluator.statistics.significance import ALPHA
from evaluator.text.number_format import format_estimate, format_ms

# (header, left-aligned, cell of a change)
_COLUMNS = (
    ("stage", True, lambda c: c.stage if c.impls[0] == c.impls[1] else
     f"{c.stage} ({c.impls[0]}→{c.impls[1]})"),
    ("", True, lambda c: c.quantile),
    ("A", False, lambda c: format_ms(c.a_ms)),
    ("B", False, lambda c: format_ms(c.b_ms)),
    ("B − A [95 %]", False, lambda c: format_estimate(c.change_ms, _ci(c), signed=True)),
    ("change", False, lambda c: _percent(c.relative)),
    ("verdict", True, lambda c: c.verdict),
    ("runs", False, lambda c: f"{c.runs[0]}/{c.runs[1]}"),
    ("p (adj.)", False, lambda c: _p(c.p_adjusted)),
)  # fmt: skip


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _percent(share: float | None) -> str:
    if share is None:
        return "-"
    text = f"{share * 100:+.1f} %"
    return text.replace("-", "−")


def _sides(a_dirs: Sequence[Path], b_dirs: Sequence[Path]) -> list[str]:
    def named(dirs: Sequence[Path]) -> str:
        names = ", ".join(Path(d).name for d in dirs[:3]) + (", …" if len(dirs) > 3 else "")
        return f"{len(dirs)} run{'s' if len(dirs) != 1 else ''} ({names})"

    return [f"A: {named(a_dirs)}", f"B: {named(b_dirs)}"]


def format_ab(comparison: ABComparison, a_dirs: Sequence[Path], b_dirs: Sequence[Path]) -> str:
    """The sides, the settings that differ, the flags, the table of changes and notes."""
    lines = _sides(a_dirs, b_dirs)
    if comparison.settings:
        lines += ["settings that differ (what the comparison measures):"]
        lines += [f"  {s}" for s in comparison.settings]
    else:
        lines += ["settings that differ: none (the sides were made alike)"]
    lines += [f"FLAG: {f}" for f in comparison.flags]
    lines += [f"left out: {u}" for u in comparison.unmatched]
    lines.append("")
    lines += _table(comparison.changes)
    tests = sum(c.p is not None for c in comparison.changes)
    notes = ["latency in ms; A, B: the mean of each side's runs; B − A: their difference,\n"
             "    with the interval its verdict is made with; change: B − A over A"]  # fmt: skip
    if tests:
        notes.append(
            f"verdict: Welch's t across the runs; each interval holds jointly with the other\n"
            f"    {tests - 1} tested ones at {(1 - ALPHA) * 100:.0f} % (Bonferroni), and a change "
            "is significant exactly\n    when its interval excludes 0; p (adj.): its p-value "
            f"times {tests}, at most 1"
        )
    if any(c.method == WITHIN_RUN for c in comparison.changes):
        notes.append(f"no verdict: {comparison.no_verdict}")
    return "\n".join(lines + notes)


def _table(changes: Sequence[Change]) -> list[str]:
    headers = [h for h, _, _ in _COLUMNS]
    body = [[cell(c) for _, _, cell in _COLUMNS] for c in changes]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(headers)]
    left = [a for _, a, _ in _COLUMNS]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, left, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(b) for b in body)]


def _ci(c: Change) -> list[float] | None:
    shown = c.shown_interval
    return list(shown) if shown else None


def _change(c: Change) -> str:
    """ "join p99 +25.0 % (+112 ms [+80–+144])"."""
    ms = format_estimate(c.change_ms, _ci(c), signed=True, unit=" ms")
    return f"{c.stage} {c.quantile} {_percent(c.relative)} ({ms})"


def verdict(check: Regression) -> str:
    """The check's outcome: ``regression``, ``ok``, or ``no verdict`` (ok, unjudged)."""
    if check.failed:
        return "regression"
    return "no verdict" if all(c.verdict == WITHHELD for c in check.changes) else "ok"


NO_VERDICT_EXIT = 4
"""The regression check's exit code when it could judge no change (too few runs a side),
unless allowed: a CI gate never passes without a judgement by mistake."""


def exit_code(check: Regression, allow_no_verdict: bool) -> int:
    """1 on a regression, :data:`NO_VERDICT_EXIT` on no verdict unless ``allow_no_verdict``,
    0 otherwise."""
    if check.failed:
        return 1
    return NO_VERDICT_EXIT if verdict(check) == "no verdict" and not allow_no_verdict else 0


def regression_line(check: Regression) -> str:
    """One line for a CI log: the outcome and the changes it rests on."""
    limit = f"{check.limit * 100:g} %"
    if check.failed:
        worst = "; ".join(f"{_change(c)}, p {_p(c.p_adjusted)}" for c in check.regressed)
        return f"REGRESSION: NEW is significantly slower than BASE by more than {limit}: {worst}"
    judged = "; ".join(f"{_change(c)} {c.verdict}" for c in check.changes)
    if verdict(check) == "no verdict":
        return f"NO VERDICT: {judged}; {check.no_verdict}"
    return f"OK: no significant regression beyond {limit}: {judged}"


def regression_json(
    check: Regression,
    comparison: ABComparison,
    base: Sequence[Path],
    new: Sequence[Path],
    code: int,
) -> dict[str, Any]:
    """The check as JSON: outcome, exit code, limit, the line, the regressed changes and
    the whole comparison."""
    return {
        "verdict": verdict(check),
        "exit_code": code,
        "max_regression": check.limit,
        "line": regression_line(check),
        "regressed": [c.as_dict() for c in check.regressed],
        "base": [str(d) for d in base],
        "new": [str(d) for d in new],
        "comparison": comparison.as_dict(),
    }
