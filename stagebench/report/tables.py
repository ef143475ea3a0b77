"""report.html's tables and lists: results directory documents as escaped HTML.

Every number keeps summary.json's (or comparison.json's, capacity.json's) value in a
``data-value`` attribute beside its shown text, so a reader of the page, and the browser
test, can take the exact figure; ``data-stat`` (and ``data-stage`` in a ladder) names it.
Latencies are shown as the terminal tables show them (:mod:`evaluator.text.number_format`):
whole ms from 10 ms, a value and its interval to one precision.
"""

import re
from html import escape
from typing import Any

from evaluator.comparison.increments import WITHIN_RUN
from evaluator.model.record import as_dict
from evaluator.model.result import Records, Summary
from evaluator.recovery.section import cause_text, level_text
from evaluator.text.caveats import seconds_worth
from evaluator.text.number_format import estimate_digits, format_exact, format_interval, format_ms

STATS = ("count", "mean", "min", "p50", "p95", "p99", "p99_9", "p99_99", "max")


def num(value: Any, shown: str | None = None, **data: str) -> str:
    """A number's cell: ``shown``, else :func:`~evaluator.text.number_format.format_exact`;
    exact in ``data-value``."""
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in data.items())
    exact = "" if value is None else f' data-value="{escape(repr(value))}"'
    text = format_exact(value) if shown is None else shown
    return f'<td class="num"{attrs}{exact}>{escape(text)}</td>'


def estimate(
    value: float | None, ci: list[float] | None, signed: bool = False, **data: str
) -> tuple[str, str]:
    """A latency's cell and its interval's text ("-" when unknown), to one precision as
    the terminal tables print them."""
    digits = None if value is None else estimate_digits(value, ci)
    shown = format_ms(value, signed, digits)
    return num(value, shown, **data), format_interval(ci, signed, digits) or "-"


def table(header: list[str], rows: list[list[str]], cls: str = "") -> str:
    """``rows`` of ready cells (``<td>…</td>``); the header is escaped here."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def cell(text: Any) -> str:
    return f"<td>{escape(format_exact(text))}</td>"


def latency_table(summary: Summary) -> str:
    """The run's latency ladder with the 95 % intervals of p50 and p99, and beside it the
    latency from the intended send time (``latency_intended``) where recorded."""
    lat, ci = summary.latency_ms, summary.confidence or {}
    intended = (summary.latency_intended or {}).get("latency_ms")
    rows = []
    for key in STATS:
        if key == "count":
            value, bounds = num(lat.get(key), stat=key), ""
        else:
            value, bounds = estimate(lat.get(key), ci.get(key), stat=key)
            bounds = bounds if key in ("p50", "p99") else ""
        row = [cell(key.replace("_", ".")), value, cell(bounds)]
        rows.append(row if intended is None else [*row, num(intended.get(key), stat=key)])
    head = ["statistic", "ms (broker clock)", "95 % interval"]
    if intended is not None:
        head.append("ms from the intended send time")
    return table(head, rows, "stats")


def records_table(records: Records) -> str:
    rows = [[cell(k), num(v)] for k, v in as_dict(records).items() if not isinstance(v, dict)]
    return table(["records", "count"], rows)


def recovery_table(recovery: dict[str, Any] | None, origin_ms: int) -> str:
    if not recovery or not recovery.get("windows"):
        return ""
    rows = [
        [
            cell(w["kind"]),
            num(round((w["start_ms"] - origin_ms) / 1000, 3)),
            num(round((w["end_ms"] - w["start_ms"]) / 1000, 3)),
            num(w["baseline_p50_ms"]),
            num(w["peak_ms"]),
            num(w["first_output_after_s"]),
            num(w["recovery_s"]),
            cell({True: "yes", False: "no", None: "unknown"}[w["recovered"]]),
            num(w.get("settled_s")),
            cell(level_text(w)),
            cell(cause_text(w) or ""),
        ]
        for w in recovery["windows"]
    ]
    header = [
        "kind",
        "starts, s into the measured period",
        "length, s",
        "baseline p50, ms",
        "peak p50, ms",
        "first output after, s",
        "recovery, s",
        "recovered",
        "settled, s",
        "settled at",
        "the process before → after",
    ]
    return table(header, rows)


ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[\w.@+-]+/)+([\w.@+-]+)")
"""An absolute path in a text: its directories are the measuring machine's."""


def local(text: str) -> str:
    """``text`` with every absolute path cut to its last part ("…/bench.toml"): a page
    shows no directory of the machine that measured."""
    return ABSOLUTE.sub(r"…/\1", text)


def warnings_list(warnings: list[str], untrusted: bool = False) -> str:
    items = [f"<li>{escape(local(w))}</li>" for w in warnings]
    if untrusted:
        items.insert(0, "<li><strong>Not trusted:</strong> outputs contradict their inputs.</li>")
    if not items:
        return '<p class="ok">No warnings.</p>'
    return f'<ul class="warnings">{"".join(items)}</ul>'


def conditions(summary: Summary) -> str:
    """Steady verdict, pace, machine load and Kafka, as a definition list."""
    steady = summary.steady_state or {}
    machine = summary.machine or {}
    pace = machine.get("pace") or {}
    broker = machine.get("broker") or {}
    warmup = summary.metadata.get("warmup") or summary.warmup or {}
    versions = summary.versions
    items = {
        "steady": (
            f"{steady['verdict']}: per-second p50 "
            f"{format_ms(steady['slope_ms_per_min'], signed=True, digits=1)} ms/min "
            f"(95 % interval {_slope_interval(steady.get('ci95'))}) "
            f"over {seconds_worth(steady)}"
        )
        if steady
        else "-",
        "warm-up": f"{warmup.get('mode', '-')}, {format_exact(warmup.get('seconds'))} s",
        "pace": (
            f"{format_exact(pace.get('before_ms'))} ms before the run, "
            f"{format_exact(pace.get('after_ms'))} ms after ({pace.get('work', '')})"
        )
        if pace
        else "-",
        "machine": (
            f"{machine.get('cores')} cores, busy {format_exact(machine.get('cpu_total_pct_mean'))}"
            f" % of a core on average, saturated in "
            f"{format_exact(_pct(machine.get('saturated_share')))} % of the seconds; other "
            f"processes {format_exact(machine.get('cpu_outside_run_pct_mean'))} %, steal "
            f"{format_exact(machine.get('steal_pct_mean'))} %"
        )
        if machine
        else "-",
        "Kafka": (
            f"{broker.get('kind', '-')} broker {versions.get('kafka_broker', '')}, "
            f"{format_exact(broker.get('cpu_percent_mean'))} % of a core on average, at most "
            f"{format_exact(broker.get('rss_mb_max'))} MB resident"
        )
        if broker
        else "-",
    }
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items.items())
    return f'<dl class="conditions">{rows}</dl>'


def _slope_interval(ci: list[float] | None) -> str:
    """The interval of a trend, to the 0.1 ms/min of its slope."""
    return format_interval(ci, signed=True, digits=1) or "-"


def _pct(share: float | None) -> float | None:
    return None if share is None else round(share * 100, 1)


def config_tables(config: dict[str, Any] | None) -> str:
    """config.json: every section's keys, values and where each value came from."""
    if not config:
        return "<p>No config.json.</p>"
    sources = config.get("sources") or {}
    parts = []
    for section, values in config.items():
        if section == "sources" or not isinstance(values, dict):
            continue
        given = sources.get(section) or {}
        rows = [
            [
                cell(k),
                f"<td><code>{escape(local(repr(v)))}</code></td>",
                cell(local(str(given.get(k, "default")))),
            ]
            for k, v in values.items()
        ]
        parts.append(
            f"<details><summary>[{escape(section)}]</summary>"
            f"{table(['key', 'value', 'source'], rows)}</details>"
        )
    return "".join(parts)


def ladder_table(rows: list[dict[str, Any]]) -> str:
    """comparison.json's stage rows: percentiles and increments with their intervals, as
    the terminal stage table shows them."""
    body = []
    for r in rows:
        stage = r["stage"]
        p50, p50_ci = estimate(r["p50"], r.get("p50_ci95"), stage=stage, stat="p50")
        p99, p99_ci = estimate(r["p99"], r.get("p99_ci95"), stage=stage, stat="p99")
        body.append(
            [
                cell(stage),
                cell(r["impl"]),
                num(r["repetitions"]),
                p50,
                cell(p50_ci),
                num(r["p95"], format_ms(r["p95"]), stage=stage, stat="p95"),
                p99,
                cell(p99_ci),
                *_increment(r, "p50"),
                *_increment(r, "p99"),
                cell(r.get("increment_over") or "-"),
                cell(r.get("mark") or ""),
            ]
        )
    header = [
        "stage",
        "impl",
        "runs",
        "p50",
        "95 %",
        "p95",
        "p99",
        "95 %",
        "+p50",
        "95 %",
        "+p99",
        "95 %",
        "over",
        "!",
    ]
    return table(header, body, "ladder")


def _increment(row: dict[str, Any], q: str) -> tuple[str, str]:
    """The increment's cell and its interval's with the verdict (the interval it was made
    with, where there is one): n.s. not significant, n.v. no verdict."""
    key = f"increment_{q}"
    interval = row.get(f"{key}_ci95_joint") or row.get(f"{key}_ci95")
    value, text = estimate(row.get(key), interval, True, stage=row["stage"], stat=key)
    if row.get(key) is None:
        return value, cell("-")
    if row.get(f"{key}_significant") is False:
        return value, cell(f"{text} n.s.")
    return value, cell(text + (" n.v." if row.get(f"{key}_method") == WITHIN_RUN else ""))
