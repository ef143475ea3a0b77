"""A capacity search's answer as text: the one line ``stagebench capacity`` prints per
search and the table it ends with over several, read from capacity.json's records
(:class:`stagebench.results.capacity.CapacityResult`); the reference data renders the same
(:mod:`stagebench.reference.blocks`)."""

import statistics

from stagebench.report.capacity import label
from stagebench.results.capacity import CapacityResult


def headline(doc: CapacityResult) -> str:
    """One search's answer in a line: its fitted capacity with the 95 % interval and the
    rate passed 90 % of the time, else the bracket it found; the latency targets it holds
    under; why it stopped, how long it took; what limited it above the capacity."""
    slo = doc.criteria.get("slo_ms") or {}
    targets = ", ".join(f"{q.replace('_', '.')} ≤ {ms:,.0f} ms" for q, ms in slo.items())
    limit = ((doc.bottleneck or {}).get("unsustainable") or {}).get("text")
    return (
        _answer(doc)
        + (f"; under {targets}" if targets else "")
        + (f"; above it, limited by {limit}" if limit else "")
    )


def setting(doc: CapacityResult) -> str:
    """The tuned setting a search ran at, after its implementation: " @ latency",
    " @ buffer_timeout_ms=100, parallelism=1"; "" for a search without --tune."""
    ran = doc.setting
    if not ran:
        return ""
    if ran["profile"] != "tuned":
        return f" @ {ran['profile']}"
    return " @ " + ", ".join(f"{key}={value}" for key, value in ran["values"].items())


def limit(docs: list[CapacityResult]) -> str:
    """What limited a stage's searches at their first unsustainable probe, in a word or
    two ("thread (engine)", "gc", "none"), the commonest first; "-" when unknown."""
    found: list[str] = []
    for doc in docs:
        named = (doc.bottleneck or {}).get("unsustainable")
        if named:
            process = named["process"]
            found.append(named["resource"] + (f" ({process})" if process and
                                              named["resource"] == "thread" else ""))  # fmt: skip
    return ", ".join(dict.fromkeys(sorted(found, key=found.count, reverse=True))) or "-"


def _answer(doc: CapacityResult) -> str:
    lo, hi = doc.sustainable_mps, doc.first_unsustainable_mps
    stopped = {
        "converged": f"bracketed within {doc.precision:.0%}",
        "max-rate": "the highest rate allowed (--max) was sustainable",
        "publisher-bound": f"the publisher could not offer {doc.publisher_limit_mps or 0:,.0f} "
        "msg/s on this machine (twice, with idle cores): the stage was not the bottleneck",
        "nothing-sustainable": "no rate was sustainable",
        "budget": "the budget ran out",
        "interrupted": "interrupted",
    }.get(doc.stopped, doc.stopped)
    per_core = doc.sustainable_mps_per_core
    core = f", {per_core:,.0f} msg/s per core used at {lo or 0:,.0f}" if per_core else ""
    took = f"{stopped}; {doc.seconds / 60:.1f} min"
    if doc.capacity_mps is not None and doc.capacity_ci95_mps and doc.pass90_ci95_mps:
        (low, high), (low90, high90) = doc.capacity_ci95_mps, doc.pass90_ci95_mps
        return (
            f"{doc.capacity_mps:,.0f} msg/s (95 % interval {low:,.0f}–{high:,.0f}), "
            f"passed 90 % of the time at {doc.pass90_mps or 0:,.0f} msg/s ({low90:,.0f}–"
            f"{high90:,.0f}){core}; {took}"
        )
    if lo is None:
        return f"below {hi:,.0f} msg/s ({stopped})" if hi else f"unknown ({stopped})"
    bracket = f" (first unsustainable: {hi:,.0f} msg/s)" if hi else ""
    return f"{lo:,.0f} msg/s sustainable{bracket}{core}; {took}"


def format_table(rows: list[CapacityResult]) -> str:
    """One line per stage: the median capacity over its searches with a fit (a pass and a
    failure), each one's 95 % interval, the median rate per core used and the capacities'
    spread. A search stopped early (budget, Ctrl-C) counts with the probes it ran, its
    interval the wider for it; when no search has a fit, the table shows the highest rate
    found sustainable, a bound."""
    by_stage: dict[tuple[str, str], list[CapacityResult]] = {}
    for doc in rows:
        by_stage.setdefault((label(doc), doc.impl + setting(doc)), []).append(doc)
    header = ["stage", "impl", "capacity msg/s", "95 % intervals", "per core used", "searches",
              "spread", "limited by", "minutes"]  # fmt: skip
    body = []
    for (name, impl), docs in by_stage.items():
        fitted = [d for d in docs if d.capacity_mps is not None]
        found = [d.capacity_mps for d in fitted if d.capacity_mps is not None]
        per_core = [d.sustainable_mps_per_core for d in fitted if d.sustainable_mps_per_core]
        bounds = [d.sustainable_mps for d in docs if d.sustainable_mps]
        if found:
            capacity = f"{statistics.median(found):,.0f}"
        else:
            capacity = f"≥ {max(bounds):,.0f}" if bounds else "-"
        intervals = [f"{lo:,.0f}–{hi:,.0f}" for d in fitted if d.capacity_ci95_mps
                     for lo, hi in [d.capacity_ci95_mps]]  # fmt: skip
        body.append([
            name, impl, capacity, ", ".join(intervals) or "-",
            f"{statistics.median(per_core):,.0f}" if per_core else "-",
            f"{len(fitted)} of {len(docs)} fitted",
            f"{min(found):,.0f}–{max(found):,.0f}" if len(found) > 1 else "-",
            limit(docs),
            f"{sum(d.seconds for d in docs) / 60:.1f}",
        ])  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)
