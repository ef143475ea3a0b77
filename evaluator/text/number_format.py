"""How every table shows a number: the terminal and Markdown tables of runs, suites,
A/B comparisons and the history, report.md and report.html.

A latency is shown to the precision its run-to-run variation allows: whole ms from
10 ms, 0.1 ms below, and a value with its interval to one precision ("448 [431–466]"),
so that ``run``, ``compare`` and ``history`` print one p50 alike. Exact figures
(counts, rates, resources) keep up to three decimals, as summary.json's values.
"""

from typing import Any


def format_cell(value: Any) -> str:
    """One table cell: "-" for None, numbers with thousands separators, floats to 0.1."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_exact(value: Any) -> str:
    """A figure as recorded: thousands separated, at most three decimals; "-" for None."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_ms(value: float | None, signed: bool = False, digits: int | None = None) -> str:
    """A latency in ms: whole ms from 10 ms, else 0.1 ms (or ``digits`` decimals); a
    true minus sign; "+" on positive values when ``signed``; "-" for None."""
    if value is None:
        return "-"
    text = f"{abs(value):,.{_digits(value) if digits is None else digits}f}"
    if value < 0 and text.strip("0.,"):
        return "−" + text
    return ("+" if signed else "") + text


def _digits(value: float) -> int:
    return 0 if abs(value) >= 9.95 else 1


def estimate_digits(value: float, bounds: list[float] | None) -> int:
    """The decimals of a value shown with its interval: whole ms when any of them
    reaches 10 ms (finer digits would be noise), else 0.1 ms."""
    return min(_digits(v) for v in (value, *(bounds or ())))


def format_interval(
    bounds: list[float] | None, signed: bool = False, digits: int | None = None
) -> str:
    """The interval as "[lo–hi]" with :func:`format_ms`; "" when unknown."""
    if bounds is None:
        return ""
    lo, hi = (format_ms(b, signed, digits) for b in bounds)
    return f"[{lo}–{hi}]"


def format_estimate(
    value: float | None, bounds: list[float] | None, signed: bool = False, unit: str = ""
) -> str:
    """The value and its interval, "448 [431–466]", all to :func:`estimate_digits`;
    ``unit`` between them ("+112 ms [+80–+144]"); "-" for None."""
    if value is None:
        return "-"
    digits = estimate_digits(value, bounds)
    interval = format_interval(bounds, signed, digits)
    return f"{format_ms(value, signed, digits)}{unit} {interval}".rstrip()
