"""One capacity search measured: its probes are real runs (:mod:`stagebench.run.runner`), in
a Spark application they share or each in its own job, judged by
:func:`stagebench.capacity.probe.judge`, searched by :func:`stagebench.capacity.search.search`;
its answer is a :class:`CapacityResult` written as capacity.json, capacity.md and
report.html (its plots)."""

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from engines.base import Impl
from engines.registry import chosen
from ground import files, rundir
from ground.errors import EngineError
from ground.kafka.naming import new_run_id
from stagebench.capacity.fit import PASS_HALF_WIDTH, PassFit
from stagebench.capacity.probe import Criteria, Probe, judge
from stagebench.capacity.result import CapacityResult
from stagebench.capacity.search import REFINE_PROBES, SearchResult, search
from stagebench.capacity.table import headline, label
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.report import html as html_report
from stagebench.run.application import Application
from stagebench.run.metadata import machine, versions
from stagebench.run.root import execute, shared_application


@dataclass(frozen=True)
class Bounds:
    """Where and how finely a search looks: its first rate, its highest, the relative width
    of its last bracket, the factor between probes while it grows, and its time budget."""

    start: float
    maximum: float
    precision: float
    growth: float
    budget_s: float | None


PROBE_KEYS = ("lead_in_s", "warmup_s", "warmup_min_s", "warmup_max_s", "settle_window_s",
              "duration_s", "tail_s", "drain_timeout_s")  # fmt: skip
"""How each probe ran, kept in capacity.json beside its verdicts."""


def one_search(
    name: str,
    impl: Impl,
    base: RunConfig,
    settings: Settings,
    criteria: Criteria,
    bounds: Bounds,
    console: Console,
    setting: dict[str, Any] | None = None,
) -> CapacityResult:
    """A search of ``name``'s capacity within ``bounds``, its probes real runs, and its
    files; ``setting``: the tuned settings it runs with (``capacity --tune``)."""

    out = files.writable_dir(
        Path(base.results_dir) / rundir.dir_name(f"capacity-{name}", new_run_id())
    )
    # in a shared application too, a probe settles over its own windows (--settle-window)
    probe_base = replace(base, stage=name, impl=impl, results_dir=str(out),
                         warm_settle_window_s=base.settle_window_s)  # fmt: skip
    began = time.monotonic()
    # with application = shared the probes share one warmed-up Spark application, as a
    # suite's runs do (not the default: see stagebench.capacity.defaults.PROBE_APPLICATION)
    first = [(replace(probe_base, rate=bounds.start), settings)]
    sharing = (
        shared_application(out, first, base, console, "search")
        if base.application == "shared"
        else contextlib.nullcontext((None, None))
    )
    with sharing as (application, warmed_up):
        probe = _Prober(probe_base, settings, criteria, console, application)
        # the budget is the whole search's, the application's start and warm-up included
        left = (
            None
            if bounds.budget_s is None
            else max(bounds.budget_s - (time.monotonic() - began), 1.0)
        )
        found = search(probe, bounds.start, bounds.maximum, bounds.precision, left, bounds.growth)
        shared = None if warmed_up is None else {**warmed_up, "alone_mps": probe.alone}
        result = capacity_result(
            name, probe_base.runs_on().name, impl, found, criteria, time.monotonic() - began,
            precision=bounds.precision, growth=bounds.growth, out=out,
            probe={**{key: getattr(probe_base, key) for key in PROBE_KEYS},
                   "tail_s": probe_base.published_tail_s, "application": shared},
            setting=setting,
        )  # fmt: skip
        # written before the application stops: stopping it can take a minute
        page = write(out, result)
    print(f"report: {page.describe()}")
    return result


class _Prober:
    """One probe of the search: a run at the rate, judged; its query runs in
    ``application`` while that runs. ``alone_mps``: the rates whose probe had a job of
    its own after all (the application stops with a query that would not stop)."""

    def __init__(self, probe_base: RunConfig, settings: Settings, criteria: Criteria,
                 console: Console, application: Application | None):  # fmt: skip
        self.base, self.settings, self.criteria = probe_base, settings, criteria
        self.console, self.application = console, application
        self.alone: list[float] = []

    def __call__(self, rate: float) -> Probe:
        name, impl, console = self.base.stage, self.base.impl, self.console
        job = f"the {self.base.runs_on().title} job"
        searched = label({"stage": name, "engine": self.base.runs_on().name})
        console.step(f"capacity of {searched} ({impl}): probe at {rate:,.0f} msg/s")
        try:
            result = execute(replace(self.base, rate=rate), self.settings, console,
                             self.application)  # fmt: skip
        except EngineError as err:  # a job that fails under this load did not sustain it
            console.warn(f"probe at {rate:,.0f} msg/s: {job} failed: {err}")
            return Probe(rate, False, (f"{job} failed: {err}",))
        warmup = result.summary.warmup or {}
        if self.application is not None and not (warmup.get("application") or {}).get("shared"):
            self.alone.append(rate)
        verdict = judge(rate, result.summary, self.criteria, run_dir=str(result.run_dir))
        console.step(f"probe at {rate:,.0f} msg/s: {verdict.verdict}"
                     + (f" ({'; '.join(verdict.reasons)})" if verdict.reasons else ""))  # fmt: skip
        return verdict


def challenge(
    name: str,
    impl: Impl,
    base: RunConfig,
    settings: Settings,
    criteria: Criteria,
    rate: float,
    console: Console,
) -> Probe:
    """One probe of ``name`` at ``rate`` (``capacity --tune``'s challenge of a setting), in
    a directory of its own."""
    out = files.writable_dir(
        Path(base.results_dir) / rundir.dir_name(f"challenge-{name}", new_run_id())
    )
    probe_base = replace(base, stage=name, impl=impl, results_dir=str(out),
                         warm_settle_window_s=base.settle_window_s)  # fmt: skip
    return _Prober(probe_base, settings, criteria, console, None)(rate)


def capacity_result(
    name: str,
    engine: str,
    impl: str,
    found: SearchResult,
    criteria: Criteria,
    seconds: float,
    *,
    precision: float,
    growth: float,
    out: Path,
    probe: dict[str, Any],
    setting: dict[str, Any] | None = None,
) -> CapacityResult:
    """capacity.json's record: the search's answer, every probe, and the conditions
    (``probe``: how each probe ran, :data:`PROBE_KEYS`)."""
    best = next(
        (p for p in reversed(found.probes) if p.rate == found.sustainable_mps and p.sustainable),
        None,
    )
    failed = next(
        (p for p in found.probes if p.rate == found.first_unsustainable_mps and not p.sustainable),
        None,
    )
    cores_used = None if best is None or not best.engine_cpu_pct else best.engine_cpu_pct / 100
    per_core = None
    if cores_used is not None and found.sustainable_mps is not None:
        per_core = round(found.sustainable_mps / cores_used, 1)
    return CapacityResult(
        stage=name,
        engine=engine,
        impl=impl,
        **_fit_fields(found.fit),
        sustainable_mps=found.sustainable_mps,
        first_unsustainable_mps=found.first_unsustainable_mps,
        publisher_limit_mps=found.publisher_limit_mps,
        precision=precision,
        bracket_width=found.bracket_width,
        stopped=found.stopped,
        engine_cores_used=None if cores_used is None else round(cores_used, 2),
        sustainable_mps_per_core=per_core,
        bottleneck={
            "sustainable": None if best is None else best.bottleneck,
            "unsustainable": None if failed is None else failed.bottleneck,
        },
        setting=setting,
        criteria=asdict(criteria),
        seconds=round(seconds, 1),
        probes=[p.as_dict() for p in found.probes],
        machine=machine(),
        versions=versions(engines=[chosen(engine, name)]),
        dir=str(out),
        growth=growth,
        probe=probe,
    )


def _fit_fields(fit: PassFit | None) -> dict[str, Any]:
    """The fitted pass curve's answer (None each without both a pass and a failure):
    ``capacity_mps`` passed half the time and ``pass90_mps`` 90 % of the time, each with its
    95 % interval, and the curve, logit P(pass) = intercept + slope · ln(rate in msg/s)."""

    if fit is None:
        keys = ("capacity_mps", "capacity_ci95_mps", "pass90_mps", "pass90_ci95_mps", "pass_curve")
        return dict.fromkeys(keys)
    return {
        "capacity_mps": round(fit.capacity_mps, 1),
        "capacity_ci95_mps": [round(v, 1) for v in fit.capacity_ci95_mps],
        "pass90_mps": round(fit.pass90_mps, 1),
        "pass90_ci95_mps": [round(v, 1) for v in fit.pass90_ci95_mps],
        "pass_curve": {
            "intercept": round(fit.intercept, 4),
            "slope": round(fit.slope, 4),
            "probes": fit.probes,
            "prior_half_width": list(PASS_HALF_WIDTH),
        },
    }


def write(out: Path, result: CapacityResult) -> html_report.Page:
    """capacity.json, capacity.md and the search's report.html, which holds its plots."""

    doc = result.as_dict()
    files.write(out / rundir.CAPACITY, json.dumps(doc, indent=2, default=str) + "\n")
    files.write(out / rundir.CAPACITY_MD, report(doc))
    return html_report.write(out)


def write_set(results_dir: Path, results: list[CapacityResult], table: str) -> Path:
    """The directory of a set of searches one command ran (``--engines``, ``--stages``,
    ``--repeat``): capacities.json naming them and the table printed, and its report.html
    with their latency–throughput curves together."""
    out = files.writable_dir(results_dir / rundir.dir_name("capacities", new_run_id()))
    searches = [os.path.relpath(result.dir, out) for result in results]
    doc = {"searches": searches, "table": table}
    files.write(out / rundir.CAPACITIES, json.dumps(doc, indent=2) + "\n")
    print(f"report: {html_report.write(out).describe()}")
    return out


def _targets(doc: dict[str, Any]) -> str:
    """The latency targets a probe met too, in words ("" without any)."""
    slo = (doc.get("criteria") or {}).get("slo_ms") or {}
    return "".join(
        f", and {name.replace('_', '.')} is at most {bound:,.0f} ms" for name, bound in slo.items()
    )


def report(doc: dict[str, Any]) -> str:
    lines = [
        f"# Capacity of {label(doc)} ({doc['impl']})",
        "",
        headline(doc) + ".",
        "",
        "A probe is sustainable when, over its measured period, the per-second latency "
        "shows no rising trend, p50 stays under "
        f"{doc['criteria']['max_p50_ms'] / 1000:g} s, the job drains within "
        f"{doc['criteria']['max_drain_s']:g} s after the input stops, no output is missing "
        f"and every output agrees with its inputs{_targets(doc)}; a probe whose publisher fell "
        "behind says "
        "nothing about the stage. Every other probe counts once, whether it passed or failed. The "
        "search grows the rate until a probe fails, bisects to "
        f"{doc['precision']:.0%} and spends its last {REFINE_PROBES} probes at the capacity "
        "estimated so far. The capacity is the rate a probe passes half the time, on a "
        "logistic curve of the probability of passing against ln rate fitted to every probe "
        "(Bayesian, with the slope's prior between a step and a toss-up over "
        f"±{PASS_HALF_WIDTH[1]:.0%}); its interval holds 95 % of the posterior.",
        "",
        *([_curve_line(doc), ""] if doc["pass_curve"] else []),
        *([_probe_line(doc["probe"]), ""] if doc.get("probe") else []),
        "| rate msg/s | verdict | p50 ms | p99 ms | engine CPU % of a core | reasons | run |",
        "|---:|---|---:|---:|---:|---|---|",
    ]
    for p in doc["probes"]:
        run = Path(p["run_dir"]).name if p["run_dir"] else "-"
        lines.append(
            f"| {p['rate']:,.0f} | {p['verdict']} | {_num(p['p50'])} | {_num(p['p99'])} | "
            f"{_num(p['engine_cpu_pct'])} | {'; '.join(p['reasons']) or '-'} | {run} |"
        )
    lines += ["", f"The plots are in [{rundir.REPORT_HTML}]({rundir.REPORT_HTML})."]
    return "\n".join(lines) + "\n"


def _curve_line(doc: dict[str, Any]) -> str:
    curve = doc["pass_curve"]
    low, high = doc["capacity_ci95_mps"]
    return (
        f"Fitted over {curve['probes']} probes: logit P(pass) = {curve['intercept']:.4g} "
        f"{curve['slope']:+.4g} · ln(rate); capacity {doc['capacity_mps']:,.0f} msg/s "
        f"(95 % interval {low:,.0f}–{high:,.0f}); passed 90 % of the time at "
        f"{doc['pass90_mps']:,.0f} msg/s; bracket "
        f"{_num(doc['sustainable_mps'])}–{_num(doc['first_unsustainable_mps'])} msg/s."
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
