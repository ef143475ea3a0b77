"""capacity.md: a capacity search's answer, how its probes were judged, its fitted curve
and every probe, from its record (:class:`stagebench.results.capacity.CapacityResult`)."""

from pathlib import Path
from typing import Any

from ground import rundir
from stagebench.capacity.fit import PASS_HALF_WIDTH
from stagebench.capacity.search import REFINE_PROBES
from stagebench.capacity.table import headline
from stagebench.report.capacity import label
from stagebench.results.capacity import CapacityResult


def _targets(doc: CapacityResult) -> str:
    """The latency targets a probe met too, in words ("" without any)."""
    slo = doc.criteria.get("slo_ms") or {}
    return "".join(
        f", and {name.replace('_', '.')} is at most {bound:,.0f} ms" for name, bound in slo.items()
    )


def markdown(doc: CapacityResult) -> str:
    """capacity.md: the answer, how a probe is judged, the fit and every probe."""
    lines = [
        f"# Capacity of {label(doc)} ({doc.impl})",
        "",
        headline(doc) + ".",
        "",
        "A probe is sustainable when, over its measured period, the per-second latency "
        "shows no rising trend, p50 stays under "
        f"{doc.criteria['max_p50_ms'] / 1000:g} s, the job drains within "
        f"{doc.criteria['max_drain_s']:g} s after the input stops, no output is missing "
        f"and every output agrees with its inputs{_targets(doc)}; a probe whose publisher fell "
        "behind says "
        "nothing about the stage. Every other probe counts once, whether it passed or failed. The "
        "search grows the rate until a probe fails, bisects to "
        f"{doc.precision:.0%} and spends its last {REFINE_PROBES} probes at the capacity "
        "estimated so far. The capacity is the rate a probe passes half the time, on a "
        "logistic curve of the probability of passing against ln rate fitted to every probe "
        "(Bayesian, with the slope's prior between a step and a toss-up over "
        f"±{PASS_HALF_WIDTH[1]:.0%}); its interval holds 95 % of the posterior.",
        "",
        *([_curve_line(doc), ""] if doc.pass_curve else []),
        *([_probe_line(doc.probe), ""] if doc.probe else []),
        "| rate msg/s | verdict | p50 ms | p99 ms | engine CPU % of a core | reasons | run |",
        "|---:|---|---:|---:|---:|---|---|",
    ]
    for p in doc.probes:
        run = Path(p.run_dir).name if p.run_dir else "-"
        lines.append(
            f"| {p.rate:,.0f} | {p.verdict} | {_num(p.p50)} | {_num(p.p99)} | "
            f"{_num(p.engine_cpu_pct)} | {'; '.join(p.reasons) or '-'} | {run} |"
        )
    lines += ["", f"The plots are in [{rundir.REPORT_HTML}]({rundir.REPORT_HTML})."]
    return "\n".join(lines) + "\n"


def _curve_line(doc: CapacityResult) -> str:
    curve = doc.pass_curve or {}
    low, high = doc.capacity_ci95_mps or (None, None)
    return (
        f"Fitted over {curve['probes']} probes: logit P(pass) = {curve['intercept']:.4g} "
        f"{curve['slope']:+.4g} · ln(rate); capacity {_num(doc.capacity_mps)} msg/s "
        f"(95 % interval {_num(low)}–{_num(high)}); passed 90 % of the time at "
        f"{_num(doc.pass90_mps)} msg/s; bracket "
        f"{_num(doc.sustainable_mps)}–{_num(doc.first_unsustainable_mps)} msg/s."
    )


def _probe_line(probe: dict[str, Any]) -> str:
    warmup = (
        f"until settled over {probe['settle_window_s']:g} s, at most {probe['warmup_max_s']:g} s"
        if probe["warmup_s"] == "auto"
        else f"{probe['warmup_s']:g} s"
    )
    lead_in = f"{probe['lead_in_s']:g} s at half the rate, then " if probe["lead_in_s"] else ""
    return (
        f"Each probe published {lead_in}the rate: a warm-up ({warmup}), "
        f"{probe['duration_s']:g} s measured"
        + (f" and a {probe['tail_s']:g} s tail" if probe["tail_s"] else "")
        + "; the job was "
        f"given {probe['drain_timeout_s']:g} s to drain. "
        + _application_line(probe.get("application"))
    )


def _application_line(shared: dict[str, Any] | None) -> str:
    if not shared:
        return "Each probe started a job of its own."
    alone = shared.get("alone_mps") or []
    return (
        "The probes ran as queries of one Spark application, warmed up first by "
        f"{', '.join(shared['stages'])} alone at {shared['rate']:,.0f} msg/s for "
        f"{shared['seconds']:g} s, not measured"
        + (
            f"; it stopped with a query that would not stop, and the probes at "
            f"{', '.join(f'{r:,.0f}' for r in alone)} msg/s had jobs of their own."
            if alone
            else "."
        )
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"
