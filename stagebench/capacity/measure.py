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
from evaluator.comparison.rows import variant
from ground import files, rundir
from ground.errors import EngineError
from ground.kafka.naming import new_run_id
from stagebench.capacity.fit import PASS_HALF_WIDTH, PassFit
from stagebench.capacity.markdown import markdown
from stagebench.capacity.probe import Criteria, Probe, judge
from stagebench.capacity.search import SearchResult, search
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.report import html as html_report
from stagebench.report.capacity import stage_label
from stagebench.results.capacity import CapacityResult
from stagebench.results.documents import CAPACITIES_SCHEMA_VERSION
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
        # a run in an execution mode of the engine's own is told apart: builtin@real-time
        mode = variant(impl, settings.section("pipeline").get("trigger"))
        result = capacity_result(
            name, probe_base.runs_on().name, mode, found, criteria, time.monotonic() - began,
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
        searched = stage_label(name, self.base.runs_on().name)
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
        probes=list(found.probes),
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
    files.write(out / rundir.CAPACITY_MD, markdown(result))
    return html_report.write(out)


def write_set(results_dir: Path, results: list[CapacityResult], table: str) -> Path:
    """The directory of a set of searches one command ran (``--engines``, ``--stages``,
    ``--repeat``): capacities.json naming them and the table printed, and its report.html
    with their latency–throughput curves together."""
    out = files.writable_dir(results_dir / rundir.dir_name("capacities", new_run_id()))
    searches = [os.path.relpath(result.dir, out) for result in results]
    doc = {"schema_version": CAPACITIES_SCHEMA_VERSION, "searches": searches, "table": table}
    files.write(out / rundir.CAPACITIES, json.dumps(doc, indent=2) + "\n")
    print(f"report: {html_report.write(out).describe()}")
    return out
