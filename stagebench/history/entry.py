"""One entry of the history of runs, read from a results directory's own files.

The history (:mod:`stagebench.history.index`) is an index, not a record of its own:
every figure in it comes from a run's summary.json (read through
:func:`evaluator.model.summary_file.load_summary`), a suite's comparison.json or a capacity
search's capacity.json, so the index can be rebuilt from the directories at any time.
A suite is one entry, with a figure per stage; its runs, which sit beside it in the
results directory, belong to it and are no entries of their own. A capacity search's
probes sit inside its directory.
"""

import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.registry import engine_for
from evaluator.comparison.differences import compared_settings, shown
from evaluator.comparison.rows import run_pace, trigger, variant
from evaluator.comparison.table import steady_text
from evaluator.model.summary_file import load_summary
from evaluator.recovery.section import FIGURES, figures
from ground import rundir
from ground.errors import EvaluationError
from stagebench.results.documents import read_capacity, read_comparison

if TYPE_CHECKING:
    from evaluator.model.result import Summary

NOT_KEY = {"stage", "impl", "rate", "workload", "results_dir"}
"""Settings with a column of their own, or no bearing on a figure: not repeated among an
entry's key settings."""


@dataclass(frozen=True)
class Figure:
    """One stage's latency in an entry: the mean over its runs, 95 % intervals, steadiness
    ("steady", or for several runs "3 steady" / "2 steady, 1 rising")."""

    stage: str
    impl: str
    runs: int
    engine: str | None = None
    """The stream engine that ran the stage (floor, spark, flink; for results made before they
    named it, the stage's default engine then); None for a row whose runs took several."""
    p50: float | None = None
    p50_ci95: list[float] | None = None
    p99: float | None = None
    p99_ci95: list[float] | None = None
    steady: str | None = None
    recovery: list[dict[str, float | None]] | None = None
    """Each run's recovery after its disturbances (:func:`evaluator.recovery.section.figures`); None
    when no run of the stage had one."""


@dataclass(frozen=True)
class Entry:
    """A run, suite or capacity search as the history lists it. ``id`` is its directory's
    name, ``path`` that directory; ``time`` ISO UTC of its start; ``settings`` every
    compared setting ("engine.spark.trigger_interval_ms" → "500"), ``key_settings`` those the
    user set (config file or command line); ``trusted`` None when unknown."""

    id: str
    kind: str
    time: str
    path: str
    workload: str | None
    rate: float | None
    commit: str | None
    versions: dict[str, Any]
    machine: str | None
    pace_ms: float | None
    trusted: bool | None
    warnings: list[str]
    figures: list[Figure]
    settings: dict[str, str] = field(default_factory=dict)
    key_settings: dict[str, str] = field(default_factory=dict)
    capacity_mps: float | None = None
    capacity_ci95_mps: list[float] | None = None
    capacity_bracket_mps: list[float | None] | None = None
    """A capacity search's highest sustainable and lowest unsustainable rate probed."""


def read_entry(path: Path) -> Entry:
    """The entry of one results directory; EvaluationError naming it when it is no
    readable run, suite or capacity search."""
    found = rundir.kind(path)
    try:
        if found == "suite":
            return _suite(path)
        if found == "capacity":
            return _capacity(path)
        return _run(path, load_summary(path))
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(f"{path}: not a {found} this version can index ({err!r})") from err


def _run(path: Path, summary: "Summary") -> Entry:
    run, lat, ci = summary.run, summary.latency_ms, summary.confidence or {}
    figure = Figure(
        stage=run["stage"], impl=variant(run["impl"], trigger(summary)), runs=1,
        engine=run.get("engine") or engine_for(run["stage"]).name,
        p50=lat.get("p50"), p50_ci95=ci.get("p50"), p99=lat.get("p99"), p99_ci95=ci.get("p99"),
        steady=(summary.steady_state or {}).get("verdict"),
        recovery=None if (found := figures(summary.recovery)) is None else [found],
    )  # fmt: skip
    return Entry(
        id=path.name, kind="run", time=_time(path, summary.metadata.get("started_at")),
        path=str(path), workload=run.get("workload"), rate=run.get("rate"),
        trusted=summary.trusted, warnings=[str(w) for w in summary.warnings or []],
        figures=[figure], pace_ms=run_pace(summary), **_conditions(summary),
    )  # fmt: skip


def _suite(path: Path) -> Entry:
    doc = read_comparison(path)
    members = [r.path for r in rundir.suite_runs(path)]
    summaries = [load_summary(d) for d in members if (d / rundir.SUMMARY).is_file()]
    figures = [
        Figure(stage=r["stage"], impl=r["impl"], runs=r["repetitions"],
               engine=r.get("engine") or engine_for(r["stage"]).name, p50=r["p50"],
               p50_ci95=r.get("p50_ci95"), p99=r["p99"], p99_ci95=r.get("p99_ci95"),
               steady=steady_text(r.get("steady") or []), recovery=_recovery(r))
        for r in doc["stages"]
    ]  # fmt: skip
    run = (doc.get("settings") or {}).get("run") or {}
    trusted = [s.trusted for s in summaries]
    paces = [p for s in summaries if (p := run_pace(s))]
    return Entry(
        id=path.name, kind="suite", time=_time(path, doc.get("created_at")),
        path=str(path), workload=run.get("workload"), rate=run.get("rate"),
        trusted=None if not trusted or None in trusted else all(trusted),
        warnings=[w for r in doc["stages"] for w in r.get("warnings") or []], figures=figures,
        pace_ms=statistics.median(paces) if paces else None,
        **_conditions(summaries[0] if summaries else None),
    )  # fmt: skip


def _recovery(row: dict[str, Any]) -> list[dict[str, float | None]] | None:
    """A comparison row's per-run recovery figures, one dict a run; None without any."""
    if row.get("recovery_s") is None:
        return None
    columns = [row.get(key) or [] for key in FIGURES]
    return [dict(zip(FIGURES, run, strict=True)) for run in zip(*columns, strict=True)]


def _capacity(path: Path) -> Entry:
    doc = read_capacity(path)
    probes = [path / Path(p.run_dir).name for p in doc.probes if p.run_dir]
    summaries = [load_summary(d) for d in probes if (d / rundir.SUMMARY).is_file()]
    conditions = _conditions(summaries[0] if summaries else None)
    if doc.machine.get("hostname"):
        conditions["machine"] = _machine_name(doc.machine)
    paces = [p for s in summaries if (p := run_pace(s))]
    stopped = doc.stopped
    return Entry(
        id=path.name, kind="capacity", time=_time(path, None), path=str(path),
        workload="latency", rate=None, trusted=None,
        warnings=[] if stopped in (None, "converged") else [f"the search stopped: {stopped}"],
        figures=[Figure(stage=doc.stage, impl=doc.impl, runs=len(doc.probes),
                        engine=_probes_engine(summaries, doc.stage))],
        pace_ms=statistics.median(paces) if paces else None,
        capacity_mps=doc.capacity_mps, capacity_ci95_mps=doc.capacity_ci95_mps,
        capacity_bracket_mps=[doc.sustainable_mps, doc.first_unsustainable_mps],
        **conditions,
    )  # fmt: skip


def _probes_engine(summaries: list["Summary"], stage: str) -> str | None:
    """The engine a capacity search's probes ran on: theirs where they name one, the
    stage's default for probes made before results named it; None for several."""
    engines = {s.run.get("engine") or engine_for(stage).name for s in summaries}
    if not engines:
        return engine_for(stage).name
    return engines.pop() if len(engines) == 1 else None


def _conditions(summary: "Summary | None") -> dict[str, Any]:
    """commit, versions, machine and settings of an entry, from a summary (None: all
    unknown)."""
    if summary is None:
        return {"commit": None, "versions": {}, "machine": None, "settings": {},
                "key_settings": {}}  # fmt: skip
    machine = summary.metadata.get("machine") or {}
    return {
        "commit": summary.versions.get("stagebench_commit"),
        "versions": summary.versions,
        "machine": _machine_name(machine) if machine else None,
        "settings": settings_of(summary),
        "key_settings": key_settings(summary.config),
    }


def settings_of(summary: "Summary") -> dict[str, str]:
    """Every compared setting of a run, "section.key" → value as shown ("run.rate",
    "engine.spark.trigger_interval_ms")."""
    out = {}
    for name, value in compared_settings(summary).items():
        if name.startswith("["):
            section, _, key = name[1:].partition("] ")
            name = f"{section}.{key}"
        else:
            name = f"run.{name}"
        out[name] = shown(value)
    return out


def key_settings(config: dict[str, Any]) -> dict[str, str]:
    """The settings a user set (config file or command line; config.json's ``sources``),
    "section.key" → value, but those with a column of their own (:data:`NOT_KEY`)."""
    out = {}
    for section, given in (config.get("sources") or {}).items():
        for key, source in given.items():
            if key in NOT_KEY or source == "capacity default":
                continue
            out[f"{section}.{key}"] = shown((config.get(section) or {}).get(key))
    return out


def _machine_name(machine: dict[str, Any]) -> str:
    host, cores = machine.get("hostname") or "unknown host", machine.get("cores")
    return f"{host} ({cores} cores)" if cores else host


def _time(path: Path, started: str | None) -> str:
    """When the entry began, ISO UTC to the second: the stamp its directory's name
    starts with, else its own record of the start (``started``, ISO), else the
    directory's time."""
    if stamp := rundir.started_at(path.name):
        return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    when = (
        datetime.fromisoformat(started)
        if started
        else datetime.fromtimestamp(path.stat().st_mtime, UTC)
    )
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
