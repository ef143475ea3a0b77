"""The history as series: one stage's figures of one engine and implementation over the
entries, oldest first, the steps of each (:mod:`stagebench.history.steps`) and what
differs across a step (commit, versions, settings, machine, pace).

Pure: entries in, series and steps out. ``stagebench history --steps`` prints them
(:func:`stagebench.history.table.format_steps`) and ``stagebench site`` draws them.
"""

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engines.registry import NAMES, engine
from stagebench.history.entry import Entry, Figure
from stagebench.history.steps import (
    MIN_BEFORE,
    THRESHOLD,
    WINDOW,
    Step,
    find_steps,
    worse_level,
)

STATS = ("p50", "p99")
"""The figures a series follows."""
NOT_COMPARED = {"run.bootstrap"}
"""Settings no difference is named for: a broker's address is the machine's, not the
measurement's."""
PACE_CHANGE = 0.1
"""A change of the host's median pace across a step that is named as a difference."""


@dataclass(frozen=True)
class Point:
    """One entry's figure of a stage."""

    entry: Entry
    figure: Figure

    def value(self, stat: str) -> float | None:
        found: float | None = getattr(self.figure, stat)
        return found

    def interval(self, stat: str) -> list[float] | None:
        found: list[float] | None = getattr(self.figure, f"{stat}_ci95")
        return found

    @property
    def engine_version(self) -> str | None:
        """The engine's release as its results name it (pyspark's version for Spark)."""
        name = self.figure.engine
        release = engine(name).release if name in NAMES else None
        found = self.entry.versions.get(release[0]) if release else None
        return None if found is None else str(found)

    @property
    def flags(self) -> list[str]:
        """Why the point deserves less trust: untrusted, warnings, not steady (a run too
        short to tell, "undetermined", is not flagged for it)."""
        out = ["untrusted"] if self.entry.trusted is False else []
        if self.entry.warnings:
            count = len(self.entry.warnings)
            out.append(f"{count} warning{'s' if count > 1 else ''}")
        steady = self.figure.steady
        verdicts = [part.split()[-1] for part in (steady or "").split(",") if part.strip()]
        if any(v not in ("steady", "undetermined") for v in verdicts):
            out.append(f"not steady ({steady})")
        return out


@dataclass(frozen=True)
class Series:
    engine: str
    stage: str
    impl: str
    points: list[Point]

    @property
    def name(self) -> str:
        return f"{self.engine} {self.stage} {self.impl}"

    @property
    def slug(self) -> str:
        """The name as a file name."""
        return self.name.replace(" ", "-")

    def having(self, stat: str) -> list[Point]:
        """The points with a value of ``stat``."""
        return [p for p in self.points if p.value(stat) is not None]


@dataclass(frozen=True)
class Found:
    """A step of one series' ``stat``; ``points`` are the series' points with that stat,
    ``differs`` a line for each thing that differs across the step."""

    series: Series
    stat: str
    step: Step
    points: list[Point]
    differs: list[str]

    @property
    def first(self) -> Point:
        """The first point of the new level."""
        return self.points[self.step.index]

    @property
    def last_before(self) -> Point:
        return self.points[self.step.index - 1]


def series_of(entries: Iterable[Entry]) -> list[Series]:
    """The series of runs' and suites' figures (a capacity search's are no latency), by
    engine, stage and implementation, each oldest first."""
    grouped: dict[tuple[str, str, str], list[Point]] = {}
    for entry in sorted(entries, key=lambda e: (e.time, e.id)):
        if entry.kind == "capacity":
            continue
        for figure in entry.figures:
            key = (figure.engine or "several", figure.stage, figure.impl)
            grouped.setdefault(key, []).append(Point(entry, figure))
    return [Series(*key, points) for key, points in sorted(grouped.items())]


def found_steps(series: Series, stat: str, threshold: float = THRESHOLD) -> list[Found]:
    """The steps of the series' ``stat``, each with what differs across it."""
    points = series.having(stat)
    values = [p.value(stat) or 0.0 for p in points]
    steps = find_steps(values, [p.interval(stat) for p in points], threshold)
    cuts = [0, *(s.index for s in steps), len(points)]
    return [
        Found(series, stat, step, points,
              differences(points[max(cuts[i], step.index - WINDOW) : step.index],
                          points[step.index : min(cuts[i + 2], step.index + WINDOW)]))
        for i, step in enumerate(steps)
    ]  # fmt: skip


def differences(before: Sequence[Point], after: Sequence[Point]) -> list[str]:
    """What differs between the points either side of a step: the commit (the last before
    and the first after, the range to bisect), and each version, setting and machine
    known on both sides whose values before and after have none in common; the pace
    when its median moved."""
    out = []
    commits = (before[-1].entry.commit, after[0].entry.commit)
    if commits[0] != commits[1]:
        out.append(f"commit: {commits[0] or '-'} → {commits[1] or '-'}")
    for key in sorted({k for p in [*before, *after] for k in _conditions(p)}):
        old, new = (
            {v for p in side if (v := _conditions(p).get(key)) is not None}
            for side in (before, after)
        )
        if old and new and not old & new:
            out.append(f"{key}: {', '.join(sorted(old))} → {', '.join(sorted(new))}")
    paces = [[p.entry.pace_ms for p in side if p.entry.pace_ms] for side in (before, after)]
    if all(paces):
        old_pace, new_pace = (statistics.median(side) for side in paces)
        if abs(new_pace / old_pace - 1) > PACE_CHANGE:
            out.append(f"pace: {old_pace:.1f} → {new_pace:.1f} ms (the host's speed)")
    return out


def _conditions(point: Point) -> dict[str, str]:
    """A point's machine, versions and settings, by the name a difference is shown with."""
    entry = point.entry
    versions = {f"version {k}": str(v) for k, v in entry.versions.items() if v is not None}
    versions.pop("version stagebench_commit", None)
    settings = {f"setting {k}": v for k, v in entry.settings.items() if k not in NOT_COMPARED}
    machine = {"machine": entry.machine} if entry.machine else {}
    return machine | versions | settings


def worse(all_series: Sequence[Series], tolerance: float) -> list[Found]:
    """The steps that put a series' newest point on a worse level (:func:`worse_level`)."""
    out = []
    for series in all_series:
        for stat in STATS:
            steps = found_steps(series, stat)
            length = len(series.having(stat))
            if steps and worse_level([s.step for s in steps], length, tolerance):
                out.append(steps[-1])
    return out


def checkable(all_series: Sequence[Series]) -> bool:
    """Whether any series has the points a step needs (:data:`MIN_BEFORE` and one)."""
    return any(len(s.having("p50")) > MIN_BEFORE for s in all_series)
