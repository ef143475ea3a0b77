"""Cumulative comparison of evaluated runs, stage by stage (docs/method.md#reports).

Runs are grouped by (stage, implementation): one row per group, ordered by the
stage ladder, with the mean of each percentile across repetitions, its spread
(min–max) and its 95 % interval. The increment of a row is the difference of its
percentiles and those of the nearest stage it builds on present in the
comparison (:func:`ground.stages.chain`: the ladder below it, parse for
tumbling-union) — its row of the same implementation, else its built-in row (custom
tumbling builds on the built-in join). It is a difference of percentiles, not a
percentile of per-record differences (the runs are separate), and labelled as
such everywhere it is shown. How an increment is judged, by how its runs were
made: :mod:`evaluator.comparison.increments`.

A comparison carries its caveats: every row lists the warnings of its runs, and
runs that differ in more than stage and implementation (rate, workload,
settings, Kafka) are refused unless the caller allows a mixed comparison, which
then names the differences above the table. The machine's pace (a fixed piece
of work timed on one core before and after each run, summary.json's
``machine.pace``) is shown per row; its spread across the runs is a median
absolute deviation relative to the median, and the comparison names every
increment a host drift of that size could explain.

The flow: :mod:`evaluator.comparison.rows` reads each run, :func:`compare` groups
them into a :class:`Comparison`, :mod:`evaluator.comparison.table` renders it (a suite's report.html
draws it).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.comparison.differences import differences
from evaluator.comparison.engines import EngineDifference
from evaluator.comparison.increments import (
    MIN_RUNS,
    NO_VERDICT,
    WITHIN_RUN,
    Resolution,
    aggregate,
    label,
)
from evaluator.comparison.result import ComparisonRow
from evaluator.comparison.rows import CI_QUANTILES, run_row
from evaluator.model.summary_file import load_summary
from evaluator.statistics.confidence import LEVEL
from evaluator.statistics.significance import CORRECTION, PAIR_DRIFT, pace_spread
from evaluator.text.number_format import format_ms
from ground.errors import EvaluationError


@dataclass(frozen=True)
class Comparison:
    """The rows of a comparison and what differs between its runs besides stage and
    implementation (empty when the runs are comparable)."""

    rows: list[ComparisonRow]
    differences: list[str] = field(default_factory=list)
    engines: list[EngineDifference] = field(default_factory=list)
    """Each pair of engines on each stage both ran (:mod:`evaluator.comparison.engines`)."""
    unresolved: list[Resolution] = field(default_factory=list)
    """The p50 differences tested and left within noise, the smallest first, each with
    the rounds it needs."""

    @property
    def resolution(self) -> Resolution | None:
        """The smallest difference left within noise (None: none)."""
        return self.unresolved[0] if self.unresolved else None

    @property
    def paces_ms(self) -> list[float]:
        """The pace of every run that recorded one
        (:func:`~evaluator.comparison.rows.run_pace`)."""
        return [p for r in self.rows for p in r.run_paces_ms if p]

    @property
    def pace_spread(self) -> float | None:
        """:func:`~evaluator.statistics.significance.pace_spread` of all the runs' paces."""
        return pace_spread(self.paces_ms)

    @property
    def pace_drift(self) -> float | None:
        """How far apart two runs' paces fall at that spread
        (:data:`~evaluator.statistics.significance.PAIR_DRIFT`)."""
        spread = self.pace_spread
        return None if spread is None else round(spread * PAIR_DRIFT, 4)

    @property
    def host_explains(self) -> list[str]:
        """Every increment a host drift of :attr:`pace_drift` could explain
        (``increment_pXX_within_pace``), as "stage/impl +pXX (+3.0 ms)" ("engine:stage/impl"
        in a table of several engines)."""
        several = len({r.engine for r in self.rows if r.engine and r.engine != "floor"}) > 1
        return [
            f"{label({'stage': r.stage, 'impl': r.impl, 'engine': r.engine}, several)} +{q} "
            f"({format_ms(getattr(r, f'increment_{q}'), signed=True)} ms)"
            for r in self.rows
            for q in CI_QUANTILES
            if getattr(r, f"increment_{q}_within_pace")
        ]

    @property
    def tests(self) -> int:
        """How many increments and differences between engines were tested, the count
        the correction divides among."""
        return sum(
            getattr(r, f"increment_{q}_p") is not None for r in self.rows for q in CI_QUANTILES
        ) + sum(getattr(d, f"{q}_p") is not None for d in self.engines for q in CI_QUANTILES)

    @property
    def significance(self) -> dict[str, Any]:
        """How the increments were judged, for comparison.json: level, correction, the
        number of tests, the runs a verdict needs, why some got none (else None), and the
        smallest difference left within noise with the rounds it needs (else None)."""
        unjudged = any(
            getattr(r, f"increment_{q}_method") == WITHIN_RUN
            for r in self.rows
            for q in CI_QUANTILES
        )
        return {
            "level": LEVEL,
            "correction": CORRECTION,
            "tests": self.tests,
            "min_runs": MIN_RUNS,
            "no_verdict": NO_VERDICT if unjudged else None,
            "within_noise": self.resolution.as_dict() if self.resolution else None,
        }

    @property
    def pace_note(self) -> str | None:
        """The caveat when a host drift the size of the runs' pace spread could explain an
        increment."""
        explained, spread, drift = self.host_explains, self.pace_spread, self.pace_drift
        if not explained or spread is None or drift is None:
            return None
        return (
            f"a fixed piece of work took {min(self.paces_ms):g} to {max(self.paces_ms):g} ms "
            f"on one core across these runs (median absolute deviation "
            f"{spread * 100:.1f} % of the median, so two runs' paces differ by up to "
            f"{drift * 100:.0f} %); a host drift of that size could explain "
            f"{', '.join(explained)}: each is within that share of the previous stage's "
            "latency, and may be the host's, not the pipeline's"
        )


def compare(
    run_dirs: Iterable[Path | str],
    allow_mixed: bool = False,
    rounds: Sequence[int] | None = None,
) -> Comparison:
    """One row per (stage, impl) of the evaluated runs, in ladder order, with increments.

    ``rounds``: the round of each run, in the order of ``run_dirs``, when the runs
    were made in rounds (each stage once per round); increments are then taken
    within each round. Without it the runs are independent samples.

    Each row is a :class:`~evaluator.comparison.result.ComparisonRow`, whose fields say
    what they hold: percentiles and their intervals, increments with their tests, and
    the runs' caveats (warnings, steadiness, paces).

    Runs that differ in more than stage and implementation
    (:func:`~evaluator.comparison.differences.differences`) are an EvaluationError naming the
    differences, unless ``allow_mixed``: then the comparison carries them in
    ``Comparison.differences``.
    """
    dirs = [Path(d) for d in run_dirs]
    if rounds is not None and len(rounds) != len(dirs):
        raise ValueError(f"{len(rounds)} rounds for {len(dirs)} runs")
    summaries = {str(d): load_summary(d) for d in dirs}
    runs = [run_row(d, summaries[str(d)]) for d in dirs]
    numbers: Sequence[int | None] = rounds if rounds is not None else [None] * len(runs)
    for run, number in zip(runs, numbers, strict=True):
        run["round"] = number
    rows, between, unresolved = aggregate(runs)
    found = differences(summaries)
    if found and not allow_mixed:
        raise EvaluationError(
            "the runs differ in more than stage and implementation, so their increments "
            f"would mix conditions: {'; '.join(found)}. Compare runs made with the same "
            "settings, or allow a mixed comparison (stagebench compare --allow-mixed)"
        )
    return Comparison(rows, found, between, unresolved)
