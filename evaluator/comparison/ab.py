"""A/B comparison: two groups of runs of the same stages, and the regression check on it.

Someone tuning a pipeline changes one setting (partitions, trigger, state store, a
Spark version) and asks whether the stage got faster. Side A and side B each hold
runs of one or more stages; for every stage both sides have, the change of p50 and of
p99 is B's mean minus A's, with a 95 % interval and a verdict, judged as an increment
of the stage table is (:func:`evaluator.comparison.increments.increment`):

- at least :data:`~evaluator.comparison.increments.MIN_RUNS` runs on each side: Welch's t on the
  runs' values, so run-to-run variation is in the interval; the comparison's tests (p50
  and p99 of every stage) are judged together
  (:data:`~evaluator.statistics.significance.CORRECTION`): the interval shown holds
  jointly with the others at 95 %, and the verdict is
  ``slower`` or ``faster`` where it excludes 0, else ``no significant difference``;
- fewer: the runs' own intervals combined, shown, and no verdict (:data:`NO_VERDICT`):
  runs of one stage land further apart than one run's interval says.

What differs between the sides is listed (that is the point of the comparison), as are
hosts of a different pace and a different Kafka, which could explain a change on their
own. The runs within a side must agree with each other, or the side mixes conditions.

:func:`regression` turns a comparison into the CI check: B (the new runs) regressed
when its p50 or p99 is worse than A's (the baseline) by more than a limit and the
difference is significant.
"""

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator.comparison.differences import compared_settings, differences, shown
from evaluator.comparison.increments import MIN_RUNS, WITHIN_RUN, increment
from evaluator.comparison.rows import CI_QUANTILES, run_pace, run_row
from evaluator.model.summary_file import load_summary
from evaluator.statistics.significance import ALPHA, CORRECTION, adjusted, joint_level
from ground.errors import EvaluationError

if TYPE_CHECKING:
    from evaluator.model.result import Summary

SLOWER, FASTER, SAME, WITHHELD = "slower", "faster", "no significant difference", "no verdict"
NO_VERDICT = (
    f"fewer than {MIN_RUNS} runs on a side: the interval combines the runs' own intervals "
    "and leaves out run-to-run variation, which is larger (one join's runs differed by up "
    f"to 19 % where each run's interval said ±2 %); give each side {MIN_RUNS} runs or more "
    f"(suite --repeat {MIN_RUNS}) for a verdict"
)
PACE_FLAG = 0.15
"""Flag sides whose median paces differ by more than this share: a run's own pace moved
by −6 to +10 % on an idle host, and three runs in a row spanned 12 %; a larger gap says
the sides ran on hosts of different speed (the runner warns within a run at 15 % too)."""
SIDES = ("A", "B")


@dataclass(frozen=True)
class Change:
    """How one percentile of one stage moved from side A to side B (ms, B − A)."""

    stage: str
    impls: tuple[str, str]
    quantile: str
    a_ms: float
    b_ms: float
    runs: tuple[int, int]
    change_ms: float
    ci95: tuple[float, float] | None
    method: str | None
    """``welch`` (across runs) or ``within-run`` (the runs' own intervals, no verdict)."""
    p: float | None
    p_adjusted: float | None
    ci95_joint: tuple[float, float] | None
    """The interval the verdict is made with: 95 % jointly with the comparison's other
    tests (None without a test)."""

    @property
    def relative(self) -> float | None:
        """The change as a share of A's value (None when A's is 0)."""
        return self.change_ms / self.a_ms if self.a_ms else None

    @property
    def significant(self) -> bool | None:
        """Whether :attr:`ci95_joint` excludes 0; None without a test."""
        if self.ci95_joint is None:
            return None
        lo, hi = self.ci95_joint
        return lo > 0 or hi < 0

    @property
    def shown_interval(self) -> tuple[float, float] | None:
        """The interval shown beside the verdict: the one it was made with, else (no
        verdict) the runs' own intervals combined."""
        return self.ci95_joint if self.ci95_joint is not None else self.ci95

    @property
    def verdict(self) -> str:
        if self.significant is None:
            return WITHHELD
        if not self.significant:
            return SAME
        return SLOWER if self.change_ms > 0 else FASTER

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage, "impl_a": self.impls[0], "impl_b": self.impls[1],
            "quantile": self.quantile, "a_ms": self.a_ms, "b_ms": self.b_ms,
            "runs_a": self.runs[0], "runs_b": self.runs[1], "change_ms": self.change_ms,
            "relative": self.relative, "ci95": list(self.ci95) if self.ci95 else None,
            "method": self.method, "p": self.p, "p_adjusted": self.p_adjusted,
            "ci95_joint": list(self.ci95_joint) if self.ci95_joint else None,
            "significant": self.significant, "verdict": self.verdict,
        }  # fmt: skip


@dataclass(frozen=True)
class ABComparison:
    """The changes of every stage both sides have, what differs between the sides
    ("name: A value, B value"), conditions that could explain a change on their own
    (pace, Kafka, machine), the stages only one side has, and why verdicts are withheld
    (None when every change got one)."""

    changes: list[Change]
    settings: list[str]
    flags: list[str]
    unmatched: list[str]
    no_verdict: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "changes": [c.as_dict() for c in self.changes],
            "settings": self.settings,
            "flags": self.flags,
            "unmatched": self.unmatched,
            "no_verdict": self.no_verdict,
            "level": 1 - ALPHA,
            "correction": CORRECTION,
        }


def changes(
    a_runs: Sequence[Mapping[str, Any]], b_runs: Sequence[Mapping[str, Any]]
) -> list[Change]:
    """The p50 and p99 changes of every stage both sides have, from per-run rows
    (:func:`evaluator.comparison.rows.run_row`: stage, impl, p50, p99, p50_ci95, p99_ci95), in
    the order of A's stages; the tests of all of them judged together
    (:data:`~evaluator.statistics.significance.CORRECTION`).
    EvaluationError when a side holds one stage in two implementations."""
    a, b = _by_stage(a_runs, "A"), _by_stage(b_runs, "B")
    found: list[tuple[str, tuple[str, str], str, dict[str, Any], tuple[int, int]]] = []
    for stage in (s for s in a if s in b):
        for q in CI_QUANTILES:
            # increment() drops runs without the percentile; so do the counts shown
            x = [r for r in a[stage] if r[q] is not None]
            y = [r for r in b[stage] if r[q] is not None]
            result = increment([dict(r) for r in y], [dict(r) for r in x], q)
            if result[f"increment_{q}"] is None:
                continue
            impls = (a[stage][0]["impl"], b[stage][0]["impl"])
            found.append((stage, impls, q, result, (len(x), len(y))))
    tested = [f[3][f"increment_{f[2]}_p"] for f in found if f[3][f"increment_{f[2]}_p"] is not None]
    p_values, level = iter(adjusted(tested)), joint_level(len(tested))
    out = []
    for stage, impls, q, result, counts in found:
        p, test = result[f"increment_{q}_p"], result[f"increment_{q}_test"]
        bounds = result[f"increment_{q}_ci95"]
        out.append(Change(
            stage=stage, impls=impls, quantile=q,
            a_ms=_mean(a[stage], q), b_ms=_mean(b[stage], q), runs=counts,
            change_ms=result[f"increment_{q}"], ci95=tuple(bounds) if bounds else None,
            method=result[f"increment_{q}_method"], p=p,
            p_adjusted=None if p is None else next(p_values),
            ci95_joint=None if test is None else test.interval(level),
        ))  # fmt: skip
    return out


def _by_stage(runs: Iterable[Mapping[str, Any]], side: str) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault(run["stage"], []).append(run)
    for stage, group in groups.items():
        impls = sorted({r["impl"] for r in group})
        if len(impls) > 1:
            raise EvaluationError(
                f"side {side} holds {stage} in {len(impls)} implementations ({', '.join(impls)}): "
                "give each side one implementation of a stage"
            )
    return groups


def _mean(runs: Sequence[Mapping[str, Any]], q: str) -> float:
    return statistics.fmean(r[q] for r in runs if r[q] is not None)


def compare_sides(
    a_dirs: Sequence[Path], b_dirs: Sequence[Path], allow_mixed: bool = False
) -> ABComparison:
    """The A/B comparison of two groups of evaluated run directories.

    EvaluationError when a summary cannot be read (:func:`load_summary`), when the
    runs within a side differ in more than stage and implementation (unless
    ``allow_mixed``), or when the sides share no stage."""
    sides = []
    for name, dirs in zip(SIDES, (a_dirs, b_dirs), strict=True):
        summaries = {str(d): load_summary(d) for d in dirs}
        mixed = differences(summaries)
        if mixed and not allow_mixed:
            raise EvaluationError(
                f"the runs of side {name} differ among themselves, so the side mixes "
                f"conditions: {'; '.join(mixed)}. Give each side runs made alike, or allow "
                "it (--allow-mixed)"
            )
        sides.append(summaries)
    rows = [[run_row(Path(d), s) for d, s in side.items()] for side in sides]
    found = changes(*rows)
    if not found:
        stages = [sorted({r["stage"] for r in side}) for side in rows]
        raise EvaluationError(
            f"the sides share no stage with a latency to compare (A: {', '.join(stages[0])}; "
            f"B: {', '.join(stages[1])})"
        )
    a_stages, b_stages = ({r["stage"] for r in side} for side in rows)
    unmatched = [f"{s} only in A" for s in sorted(a_stages - b_stages)]
    unmatched += [f"{s} only in B" for s in sorted(b_stages - a_stages)]
    withheld = any(c.method == WITHIN_RUN for c in found)
    a_sum, b_sum = (list(side.values()) for side in sides)
    return ABComparison(
        changes=found,
        settings=setting_changes(a_sum, b_sum),
        flags=condition_flags(a_sum, b_sum),
        unmatched=unmatched,
        no_verdict=NO_VERDICT if withheld else None,
    )


def setting_changes(a: Sequence["Summary"], b: Sequence["Summary"]) -> list[str]:
    """The settings whose values differ between the sides, "name: A 0, B 500" (a side
    mixing values lists them all, "A 0/100"); stage and implementation are left out,
    as in the stage table (:func:`evaluator.comparison.differences.compared_settings`)."""
    values = [[compared_settings(s) for s in side] for side in (a, b)]
    names = dict.fromkeys(n for side in values for settings in side for n in settings)
    lines = []
    for name in names:
        shown_values = [
            "/".join(dict.fromkeys(shown(s.get(name)) if name in s else "absent" for s in side))
            for side in values
        ]
        if shown_values[0] != shown_values[1]:
            lines.append(f"{name}: A {shown_values[0]}, B {shown_values[1]}")
    return lines


def condition_flags(a: Sequence["Summary"], b: Sequence["Summary"]) -> list[str]:
    """Conditions of the sides that could move a latency on their own: a pace gap beyond
    :data:`PACE_FLAG`, another Kafka (broker kind, version, image), another machine."""
    flags = []
    pace_a, pace_b = _median_pace(a), _median_pace(b)
    if pace_a and pace_b and abs(pace_b / pace_a - 1) > PACE_FLAG:
        flags.append(
            f"pace: a fixed piece of work took {pace_a:g} ms on one core around A's runs and "
            f"{pace_b:g} ms around B's ({(pace_b / pace_a - 1) * 100:+.0f} %, flagged "
            f"beyond ±{PACE_FLAG * 100:.0f} %): the hosts' speeds differ, which alone moves "
            "latency"
        )
    for what, describe in (("Kafka", _kafka), ("machine", _machine)):
        seen = ["/".join(sorted(dict.fromkeys(describe(s) for s in side))) for side in (a, b)]
        if seen[0] != seen[1]:
            flags.append(f"{what}: A on {seen[0]}, B on {seen[1]}")
    return flags


def _median_pace(summaries: Sequence["Summary"]) -> float | None:
    paces = [p for s in summaries if (p := run_pace(s))]
    return statistics.median(paces) if paces else None


def _kafka(summary: "Summary") -> str:
    broker = (summary.machine or {}).get("broker") or {}
    version = summary.versions.get("kafka_broker")
    images = ",".join(broker.get("images") or [])
    return " ".join(str(p) for p in (broker.get("kind") or "unknown", version, images) if p)


def _machine(summary: "Summary") -> str:
    machine = summary.metadata.get("machine") or {}
    cores = machine.get("cores") or (summary.machine or {}).get("cores")
    host = machine.get("hostname") or "unknown host"
    return f"{host} ({cores} cores)" if cores else host


@dataclass(frozen=True)
class Regression:
    """The regression check: the changes that exceed ``limit`` (a share of the baseline's
    value) and are significantly slower; every change judged, and why none could be."""

    limit: float
    regressed: list[Change]
    changes: list[Change]
    no_verdict: str | None

    @property
    def failed(self) -> bool:
        return bool(self.regressed)


def regression(comparison: ABComparison, limit: float) -> Regression:
    """B regressed against A (the baseline) where its p50 or p99 is worse by more than
    ``limit`` (0.1: 10 % of A's value) and the change is significantly slower. A change
    without a verdict (fewer than 3 runs a side) never fails the check; the comparison's
    ``no_verdict`` says why."""
    if limit < 0:
        raise ValueError(f"limit {limit} < 0")
    worse = [
        c
        for c in comparison.changes
        # a significant rise from 0 ms (the floor's p50 can read 0) exceeds any limit
        if c.verdict == SLOWER and (c.relative is None or c.relative > limit)
    ]
    return Regression(limit, worse, comparison.changes, comparison.no_verdict)
