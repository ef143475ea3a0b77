"""The line under every reference block: when, on what machine and with which engine,
Kafka and stagebench commit its stored results were measured, and where they are.

A suite's runs record it in their summary.json (``metadata.machine``, ``versions``,
``machine.broker``); a capacity search in its capacity.json (``machine``, ``versions``,
its date in its directory's name).
"""

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.registry import engines
from ground import rundir
from stagebench.reference.data import data_links
from stagebench.results.capacity import CapacityResult

if TYPE_CHECKING:
    from evaluator.model.result import Summary


def _one(values: Iterable[Any]) -> str:
    """The distinct values recorded, in order, joined by " / "; "unknown" for none."""
    return " / ".join(dict.fromkeys(str(v) for v in values if v)) or "unknown"


def measured_line(
    dates: Iterable[str],
    machines: Sequence[Mapping[str, Any]],
    versions: Sequence[Mapping[str, Any]],
    brokers: Sequence[Any] | None,
    data: str,
) -> str:
    """One line: the dates (YYYY-MM-DD) the results were measured on, the machines' cores
    and processor, the engines' releases (:attr:`engines.base.Engine.release`, and the Java
    they ran on, where recorded), Kafka (and broker kind, unless ``brokers`` is None) and
    stagebench commit of ``versions``, and ``data``, the links to the stored results."""
    days = sorted(d for d in dates if d)
    if not days:
        when = "on an unknown date"
    else:
        when = f"on {days[0]}" if days[0] == days[-1] else f"from {days[0]} to {days[-1]}"
    processor = _one(m.get("processor") for m in machines)
    machine = f"{_one(m.get('cores') for m in machines)} cores" + (
        "" if processor == "unknown" else f" ({processor})"
    )
    kafka = _one(v.get("kafka_broker") for v in versions)
    releases = [(key, label) for e in engines() if e.release for key, label in [e.release]]
    ran = [(key, label) for key, label in releases if any(v.get(key) for v in versions)]
    engine = ", ".join(
        f"{label} {_one(v.get(key) for v in versions)}" for key, label in ran or releases[:1]
    )
    java = _one(v.get("java") for v in versions)
    if java != "unknown":
        engine += f" (Java {java})"
    broker = "" if brokers is None else f" ({_one(brokers)} broker)"
    return (
        f"Measured {when}, {machine}, {engine}, "
        f"Kafka {kafka}{broker}, stagebench commit "
        f"`{_one(v.get('stagebench_commit') for v in versions)}`; data: {data}."
    )


def suite_line(name: str, suite: Mapping[str, Any], summaries: list["Summary"], where: Path) -> str:
    """:func:`measured_line` of the stored suite ``name`` for a doc in ``where``:
    ``suite`` is its comparison.json, ``summaries`` its runs' summaries."""
    # the runs' own starts (UTC); the suite's writing when they recorded none
    started: list[str | None] = [t for s in summaries if (t := s.metadata.get("started_at"))] or [
        suite.get("created_at")
    ]
    machines = [_machine(s) for s in summaries]
    brokers = [((s.machine or {}).get("broker") or {}).get("kind") for s in summaries]
    return measured_line(
        (str(t)[:10] for t in started if t),
        machines,
        [s.versions for s in summaries],
        brokers,
        data_links([name], where),
    )


def _machine(summary: "Summary") -> dict[str, Any]:
    """The cores and processor of the machine a run ran on."""
    machine = summary.metadata.get("machine") or {}
    cores = machine.get("cores") or (summary.machine or {}).get("cores")
    return {"cores": cores, "processor": machine.get("processor")}


def capacity_line(names: list[str], docs: list[CapacityResult], where: Path) -> str:
    """:func:`measured_line` of the stored capacity searches ``names`` (their capacity.json
    ``docs``) for a doc in ``where``; each search's date is that of its directory's name."""
    dates = []
    for name, doc in zip(names, docs, strict=True):
        stamp = rundir.started_at(Path(doc.dir or name).name) or rundir.started_at(name)
        if stamp:
            dates.append(stamp.strftime("%Y-%m-%d"))
    return measured_line(
        dates,
        [d.machine or {} for d in docs],
        [d.versions or {} for d in docs],
        None,
        data_links(names, where),
    )
