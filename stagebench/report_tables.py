"""report.html's tables and lists: results directory documents as escaped HTML.

Every number keeps summary.json's (or comparison.json's, capacity.json's) value in a
``data-value`` attribute beside its shown text, so a reader of the page, and the browser
test, can take the exact figure; ``data-stat`` (and ``data-stage`` in a ladder) names it.
"""

from html import escape
from typing import Any

from evaluator.compare import WITHIN_RUN

STATS = ("count", "mean", "min", "p50", "p95", "p99", "p99_9", "p99_99", "max")


def fmt(value: Any) -> str:
    """As report.md shows numbers: thousands separated, at most three decimals."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def num(value: Any, **data: str) -> str:
    """A number's cell: shown as :func:`fmt`, exact in ``data-value``."""
    attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in data.items())
    exact = "" if value is None else f' data-value="{escape(repr(value))}"'
    return f'<td class="num"{attrs}{exact}>{escape(fmt(value))}</td>'


def interval(ci: list[float] | None, signed: bool = False) -> str:
    if not ci:
        return "-"
    sign = "+" if signed else ""
    return f"[{ci[0]:{sign},.0f}–{ci[1]:{sign},.0f}]"


def table(header: list[str], rows: list[list[str]], cls: str = "") -> str:
    """``rows`` of ready cells (``<td>…</td>``); the header is escaped here."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def cell(text: Any) -> str:
    return f"<td>{escape(fmt(text))}</td>"


def latency_table(summary: dict[str, Any]) -> str:
    """The run's latency ladder with the 95 % intervals of p50 and p99."""
    lat, ci = summary["latency_ms"], summary.get("confidence") or {}
    rows = [
        [
            cell(key.replace("_", ".")),
            num(lat.get(key), stat=key),
            cell(interval(ci.get(key)) if key in ("p50", "p99") else ""),
        ]
        for key in STATS
    ]
    return table(["statistic", "ms (broker clock)", "95 % interval"], rows, "stats")


def records_table(records: dict[str, Any]) -> str:
    rows = [[cell(k), num(v)] for k, v in records.items() if not isinstance(v, dict)]
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
    ]
    return table(header, rows)


def warnings_list(warnings: list[str], untrusted: bool = False) -> str:
    items = [f"<li>{escape(w)}</li>" for w in warnings]
    if untrusted:
        items.insert(0, "<li><strong>Not trusted:</strong> outputs contradict their inputs.</li>")
    if not items:
        return '<p class="ok">No warnings.</p>'
    return f'<ul class="warnings">{"".join(items)}</ul>'


def conditions(summary: dict[str, Any]) -> str:
    """Steady verdict, pace, machine load and Kafka, as a definition list."""
    steady = summary.get("steady_state") or {}
    machine = summary.get("machine") or {}
    pace = machine.get("pace") or {}
    broker = machine.get("broker") or {}
    warmup = (summary.get("metadata") or {}).get("warmup") or summary.get("warmup") or {}
    versions = summary.get("versions") or {}
    items = {
        "steady": (
            f"{steady['verdict']}: per-second p50 {steady['slope_ms_per_min']:+,.1f} "
            f"ms/min (95 % interval {interval(steady.get('ci95'), signed=True)}) "
            f"over {steady['seconds']} s with outputs"
        )
        if steady
        else "-",
        "warm-up": f"{warmup.get('mode', '-')}, {fmt(warmup.get('seconds'))} s",
        "pace": (
            f"{fmt(pace.get('before_ms'))} ms before the run, {fmt(pace.get('after_ms'))} "
            f"ms after ({pace.get('work', '')})"
        )
        if pace
        else "-",
        "machine": (
            f"{machine.get('cores')} cores, busy {fmt(machine.get('cpu_total_pct_mean'))}"
            f" % of a core on average, saturated in "
            f"{fmt(_pct(machine.get('saturated_share')))} % of the seconds; other "
            f"processes {fmt(machine.get('cpu_outside_run_pct_mean'))} %, steal "
            f"{fmt(machine.get('steal_pct_mean'))} %"
        )
        if machine
        else "-",
        "Kafka": (
            f"{broker.get('kind', '-')} broker {versions.get('kafka_broker', '')}, "
            f"{fmt(broker.get('cpu_percent_mean'))} % of a core on average, at most "
            f"{fmt(broker.get('rss_mb_max'))} MB resident"
        )
        if broker
        else "-",
    }
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items.items())
    return f'<dl class="conditions">{rows}</dl>'


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
            [cell(k), f"<td><code>{escape(repr(v))}</code></td>", cell(given.get(k, "default"))]
            for k, v in values.items()
        ]
        parts.append(
            f"<details><summary>[{escape(section)}]</summary>"
            f"{table(['key', 'value', 'source'], rows)}</details>"
        )
    return "".join(parts)


def ladder_table(rows: list[dict[str, Any]]) -> str:
    """comparison.json's stage rows: percentiles and increments with their intervals."""
    body = []
    for r in rows:
        stage = r["stage"]
        body.append(
            [
                cell(stage),
                cell(r["impl"]),
                num(r["repetitions"]),
                num(r["p50"], stage=stage, stat="p50"),
                cell(interval(r.get("p50_ci95"))),
                num(r["p95"], stage=stage, stat="p95"),
                num(r["p99"], stage=stage, stat="p99"),
                cell(interval(r.get("p99_ci95"))),
                num(r.get("increment_p50"), stage=stage, stat="increment_p50"),
                cell(_increment(r, "p50")),
                num(r.get("increment_p99"), stage=stage, stat="increment_p99"),
                cell(_increment(r, "p99")),
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


def _increment(row: dict[str, Any], q: str) -> str:
    """The increment's interval and verdict: n.s. not significant, n.v. no verdict."""
    if row.get(f"increment_{q}") is None:
        return "-"
    text = interval(row.get(f"increment_{q}_ci95"), signed=True)
    if row.get(f"increment_{q}_significant") is False:
        return f"{text} n.s."
    return text + (" n.v." if row.get(f"increment_{q}_method") == WITHIN_RUN else "")
