"""A suite: the stage ladder run with identical settings, in rounds, then the increment table.

Identical but for what an entry of ``--stages`` names itself
(:mod:`stagebench.suite.entry`): the engine, a window's implementation
(``tumbling/custom``) and Spark's real-time mode (``tumbling-union@real-time``), each a
row of its own.

A round runs every stage once, in the order of :mod:`stagebench.suite.order`
(printed and kept in comparison.json). Each increment is taken within a
round (stage − previous stage of the same round); with ``repeat`` ≥ 3 its
interval comes from the per-round differences (:mod:`evaluator.comparison.increments`). One
round says how precisely each run measured its stage, not whether the next
run would agree, so it gives no significance verdict. A run that fails leaves its
round without that stage, and the suite goes on: hours of other runs still make a
table, which names the failed runs.
"""

import contextlib
import json
import secrets
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from evaluator.comparison.compare import Comparison, compare
from evaluator.comparison.increments import MIN_RUNS
from evaluator.comparison.table import to_markdown
from evaluator.model.summary_file import is_incomplete
from evaluator.statistics.significance import MAX_ROUNDS
from ground import files, rundir
from ground.errors import StagebenchError
from ground.kafka.naming import new_run_id
from stagebench.config.layers import Settings, engine_tables
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.report import html as html_report
from stagebench.run.root import execute, shared_application
from stagebench.run.warmup import describe_warm_up
from stagebench.suite.auto import Plan, plan_rounds
from stagebench.suite.entry import Entry, entry_run
from stagebench.suite.order import Order, round_orders


class FailedRun(TypedDict):
    """A run of the suite that failed: comparison.json's ``failed[]``."""

    round: int
    stage: str
    impl: str
    error: str


@dataclass(frozen=True)
class SuiteResult:
    """The suite directory, its comparison, its order, the runs with missing
    outputs or outputs that contradict their inputs (not trusted), the runs that
    failed (round, stage, impl, error) and the suite's page."""

    suite_dir: Path
    comparison: Comparison
    order: Order
    incomplete: list[Path]
    failed: list[FailedRun]
    page: html_report.Page
    """The suite's report.html."""


def run_suite(
    stages: list[Entry],
    repeat: int | None,
    base: RunConfig,
    settings: Settings,
    console: Console,
    seed: int | None = None,
    budget_s: float | None = None,
) -> SuiteResult:
    """Run every (stage, impl) once in each of ``repeat`` rounds, in the order of
    :func:`round_orders` (``seed``: a fresh random one when None); ``repeat`` None: as
    many rounds as :func:`~stagebench.suite.auto.plan_rounds` plans after the first three,
    within ``budget_s`` seconds."""
    suite_id = new_run_id()
    suite_dir = Path(base.results_dir) / rundir.dir_name("suite", suite_id)
    files.writable_dir(suite_dir)
    order = round_orders(
        stages,
        repeat or MAX_ROUNDS,
        secrets.randbits(32) if seed is None else seed,
        fixed_first=base.application == "shared",
        engine=base.engine,
    )
    if repeat:
        console.step(f"suite {suite_id}: {repeat} round(s), {order.describe()}")
    else:
        console.step(
            f"suite {suite_id}: {MIN_RUNS} rounds, then as many as the verdicts need within "
            f"{(budget_s or 0) / 60:g} min; {order.kind()}"
        )
    run_dirs: list[Path] = []
    rounds: list[int] = []
    incomplete: list[Path] = []
    failed: list[FailedRun] = []
    total = f"{len(stages) * repeat}" if repeat else "?"
    runs = {entry: entry_run(base, settings, entry) for entry in stages}
    started, planned = time.monotonic(), None
    sharing = (
        shared_application(suite_dir, list(runs.values()), base, console, "suite")
        if base.application == "shared"
        else contextlib.nullcontext((None, None))
    )
    with sharing as (application, warmed_up):
        for k, round_order in enumerate(order.rounds, 1):
            if repeat is None and k == MIN_RUNS + 1:
                planned = _plan(run_dirs, rounds, time.monotonic() - started, budget_s)
                console.step(f"suite {suite_id}: after {MIN_RUNS} rounds: {planned.reason}")
                total = f"{len(stages) * planned.rounds}"
            if planned is not None and k > planned.rounds:
                order = replace(order, rounds=order.rounds[: k - 1])
                break
            for stage, impl in round_order:
                of = repeat or (planned.rounds if planned else "?")
                console.step(
                    f"suite {suite_id}: run {len(run_dirs) + 1} of {total} "
                    f"(round {k} of {of}), stage {stage} ({impl})"
                )
                try:
                    result = execute(*runs[stage, impl], console, application)
                except StagebenchError as err:
                    # the other runs still make a table; the round lacks only this stage
                    console.warn(
                        f"suite {suite_id}: round {k}, stage {stage} ({impl}) failed: {err}"
                    )
                    failed.append({"round": k, "stage": stage, "impl": impl, "error": str(err)})
                    continue
                run_dirs.append(result.run_dir)
                rounds.append(k)
                if is_incomplete(result.summary):
                    incomplete.append(result.run_dir)
    if not run_dirs:
        raise StagebenchError(
            f"suite {suite_id}: every run failed; the first: {failed[0]['error']}"
        )
    # a suite keeps its runs even when they turn out not comparable; it says so loudly
    comparison = compare(run_dirs, allow_mixed=True, rounds=rounds)
    _write(suite_dir, comparison, base, settings, order, planned, budget_s, warmed_up, failed)
    page = html_report.write(suite_dir)
    return SuiteResult(suite_dir, comparison, order, incomplete, failed, page)


def _plan(run_dirs: list[Path], rounds: list[int], spent: float, budget_s: float | None) -> Plan:
    """``--repeat auto``'s plan after the first rounds, which took ``spent`` seconds."""
    if not run_dirs:
        return Plan(MIN_RUNS, "every run so far failed")
    unresolved = compare(run_dirs, allow_mixed=True, rounds=rounds).unresolved
    return plan_rounds(unresolved, spent / MIN_RUNS, (budget_s or 0) - spent)


def _write(
    suite_dir: Path,
    comparison: Comparison,
    base: RunConfig,
    settings: Settings,
    order: Order,
    planned: Plan | None,
    budget_s: float | None,
    warmed_up: dict[str, Any] | None,
    failed: list[FailedRun],
) -> None:
    """The suite's comparison.json and comparison.md."""
    suite_id = suite_dir.name.rsplit("-", 1)[-1]
    doc = {
        "suite": suite_id,
        "created_at": datetime.now(UTC).isoformat(),
        "settings": {
            "run": {k: v for k, v in vars(base).items() if k not in ("stage", "impl")},
            **engine_tables(settings),
        },
        "repeat": len(order.rounds),
        "auto": None if planned is None else {"budget_s": budget_s, "plan": planned.reason},
        "order": order.as_json(),
        "application": warmed_up,
        "failed": failed,
        "stages": [row.as_dict() for row in comparison.rows],
        "engines": [pair.as_dict() for pair in comparison.engines],
        "significance": comparison.significance,
        "differences": comparison.differences,
        "pace_spread": comparison.pace_spread,
        "pace_drift": comparison.pace_drift,
    }
    files.write(suite_dir / rundir.COMPARISON, json.dumps(doc, indent=2, default=str) + "\n")
    count = len(order.rounds)
    rounds_note = f"{count} round{'s' if count > 1 else ''}, {order.describe()}."
    if planned is not None:
        rounds_note += f" Rounds planned after the first {MIN_RUNS}: {planned.reason}."
    if warmed_up is not None:
        rounds_note += " " + describe_warm_up(warmed_up)
    if failed:
        rounds_note += "\n\nFailed, so missing from the table: " + "; ".join(
            f"round {f['round']}, {f['stage']} ({f['impl']}): {f['error']}" for f in failed
        )
    html = rundir.REPORT_HTML
    files.write(
        suite_dir / rundir.COMPARISON_MD,
        f"# Suite {suite_id}\n\n{rounds_note}\n\n{to_markdown(comparison)}\n\n"
        f"Plots: in [{html}]({html}), beside this file.\n",
    )
