"""The increments of a stage table: per-run rows grouped by (engine, stage,
implementation), the mean, spread and 95 % interval of each percentile, and each row's
increment over the nearest stage it builds on run by the same engine (the floor under
every engine's ladder), with its interval and verdict.

How an increment is judged depends on how its runs were made:

- in rounds (a suite: every round runs each stage once, in its own random
  order), the increment is the mean of the per-round differences (stage −
  previous stage of the same round) and its interval Student-t on those
  differences: run-to-run variation enters it, and a host that drifts over the
  suite hits both runs of a round alike;
- in runs made apart, Welch–Satterthwaite on the runs' values;
- with fewer than :data:`MIN_RUNS` runs of either stage, neither: the interval
  combines the runs' own within-run intervals (asymmetric bounds kept) and so
  measures only within-run precision, and the increment gets no verdict. Runs
  of a join whose own intervals said ±2 % differed by up to 19 %.

The tests of one table are judged together (:data:`~evaluator.statistics.significance.CORRECTION`):
each interval printed beside a verdict holds jointly with the table's others at 95 %,
and the verdict is "significant" exactly when it excludes 0. The table names the
smallest difference it leaves within noise and the rounds the spread seen says it needs
(:class:`Resolution`).
"""

import statistics
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evaluator.comparison.engines import EngineDifference, engine_differences
from evaluator.comparison.result import ComparisonRow
from evaluator.comparison.rows import CI_QUANTILES, QUANTILES
from evaluator.recovery import section as recovery
from evaluator.statistics.confidence import runs_interval
from evaluator.statistics.significance import (
    MAX_ROUNDS,
    PAIR_DRIFT,
    TTest,
    adjusted,
    joint_level,
    mover,
    pace_spread,
    paired_t,
    welch,
)
from evaluator.text.number_format import format_ms
from ground.stages import STAGES, chain

ACROSS_RUNS = "across runs"
# how an increment's interval was found
PAIRED = "rounds"
WELCH = "welch"
WITHIN_RUN = "within-run"
MIN_RUNS = 3
"""Runs of each stage (or rounds) an increment needs for a significance verdict: the
spread of two runs is a poor estimate of run-to-run variation, and with one there is none."""
NO_VERDICT = (
    f"fewer than {MIN_RUNS} runs of a stage: its interval combines the runs' own "
    "within-run intervals and leaves out run-to-run variation, which is larger (one join's "
    "runs differed by up to 19 % where each run's interval said ±2 %); repeat the stages "
    f"(suite --repeat {MIN_RUNS}) for a verdict"
)
MARK = "!"
"""A row's mark when its runs have warnings."""
BASELINE_IMPL = "builtin"
SHOWN = "p50"
CLOCK_MS = 1.0
"""The broker clock's resolution: a table names the rounds its smallest difference within
noise needs among those at least this large, as a smaller one is under what one clock
reading tells apart."""
Key = tuple[str | None, str, str]
"""A row's runs: (engine, stage, impl)."""


@dataclass(frozen=True)
class Resolution:
    """The smallest difference a table tested and left within noise, and how many runs of
    each side (rounds, in a suite) the spread seen says would tell it from noise."""

    what: str
    """The difference, "ingest: kafka-streams − flink p50" or "join +p99"."""
    difference_ms: float
    spread_ms: float
    """The standard deviation of one round's difference (of one run's, for runs made apart:
    both sides' together)."""
    method: str
    """How it was judged: :data:`PAIRED` (in rounds) or :data:`WELCH` (runs made apart)."""
    runs: int
    """Rounds (runs of each side) it was judged on."""
    needed: int | None
    """Runs of each side at which it would be significant with the table's tests, if the
    difference and the spread stayed as seen; None: more than 100."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """The line under a table."""
        runs = "rounds" if self.method == PAIRED else "runs of each side"
        seen = (
            f"within noise, the smallest difference: {self.what} "
            f"{format_ms(self.difference_ms, signed=True)} ms, judged on {self.runs} {runs} "
            f"with a spread (SD) of {format_ms(self.spread_ms)} ms"
        )
        if self.needed is None:
            return f"{seen}; {MAX_ROUNDS} {runs} of that spread could not tell it from noise"
        how = f" (suite --repeat {self.needed})" if self.method == PAIRED else ""
        return (
            f"{seen}; about {self.needed} {runs}{how} would tell it from noise, if it and the "
            "spread stay as seen"
        )


def _key(row: dict[str, Any]) -> Key:
    return row.get("engine"), row["stage"], row["impl"]


def aggregate(
    rows: list[dict[str, Any]],
) -> tuple[list[ComparisonRow], list[EngineDifference], list[Resolution]]:
    """One row per (engine, stage, impl) from per-run rows
    (:func:`~evaluator.comparison.rows.run_row`, with their ``round`` or None): means,
    spreads, intervals, caveats and increments, ordered by the stage ladder, then engine
    and implementation; the differences between engines on each stage they share
    (:mod:`evaluator.comparison.engines`), judged together with the increments
    (:func:`judge`); and the differences left within noise (:class:`Resolution`), the
    smallest first."""
    groups: dict[Key, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(_key(row), []).append(row)
    spread = pace_spread([r["pace_ms"] for r in rows if r["pace_ms"]])
    keys = sorted(groups, key=lambda k: (STAGES.index(k[1]), str(k[0]), str(k[2])))
    out = [_measured(stage, impl, groups[(engine, stage, impl)]) for engine, stage, impl in keys]
    several = len({e["engine"] for e in out if chain(e["stage"])[0].name != e["stage"]}) > 1
    for entry in out:
        base = _baseline(entry, out)
        base_runs = groups[_key(base)] if base else []
        for q in QUANTILES:
            entry.update(increment(groups[_key(entry)], base_runs, q))
        for q in CI_QUANTILES:
            change, before = entry[f"increment_{q}"], base[q] if base else None
            entry[f"increment_{q}_within_pace"] = (
                None
                if change is None or before is None or spread is None
                else abs(change) <= spread * PAIR_DRIFT * before
            )
        entry["increment_over"] = label(base, several) if base else None
    between = engine_differences(groups, increment)
    tests = [
        (entry, f"increment_{q}", f"{label(entry, several)} +{q}")
        for entry in out
        for q in CI_QUANTILES
    ]
    tests += [
        (d, q, f"{d['stage']}: {d['engine']} − {d['over']} {q}")
        for d in between
        for q in CI_QUANTILES
    ]
    unresolved = judge(tests)
    return (
        [ComparisonRow(**entry) for entry in out],
        [EngineDifference(**d) for d in between],
        unresolved,
    )


def _measured(stage: str, impl: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A row's keys up to its increments: the runs' means, spreads and intervals, which
    runs they are, their steadiness, paces and warnings."""
    entry: dict[str, Any] = {"stage": stage, "impl": impl, "repetitions": len(runs)}
    for q in QUANTILES:
        values = [r[q] for r in runs if r[q] is not None]
        entry[q] = statistics.fmean(values) if values else None
        entry[f"{q}_spread"] = [min(values), max(values)] if values else None
    entry.update(_intervals(runs))
    entry["run_dir"] = runs[len(runs) // 2]["run_dir"]
    entry["run_dirs"] = [r["run_dir"] for r in runs]
    engines = {r.get("engine") for r in runs}
    entry["engine"] = engines.pop() if len(engines) == 1 else None
    entry["run_rounds"] = [r.get("round") for r in runs]
    entry["steady"] = [r["steady"] for r in runs]
    entry["run_paces_ms"] = [r["pace_ms"] for r in runs]
    paces = [p for p in entry["run_paces_ms"] if p]
    entry["pace_ms"] = statistics.median(paces) if paces else None
    warnings = (f"{r['run_dir']}: {w}" for r in runs for w in r["warnings"])
    entry["warnings"] = list(dict.fromkeys(warnings))
    entry["mark"] = MARK if entry["warnings"] else ""
    for key in (*(f"first_update_{q}" for q in CI_QUANTILES), "updates_per_window"):
        values = [r[key] for r in runs if r.get(key) is not None]
        entry[key] = statistics.fmean(values) if values else None
    disturbed = any(r.get("recovery") for r in runs)
    for key in recovery.FIGURES:
        entry[key] = [(r.get("recovery") or {}).get(key) for r in runs] if disturbed else None
    return entry


def _intervals(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """p50_ci95, p99_ci95 and ci_method of a group of runs: across the runs when two
    or more have the percentile, else the one run's within-run interval, else None."""
    out: dict[str, Any] = {"ci_method": None}
    for q in CI_QUANTILES:
        measured = [r for r in runs if r[q] is not None]
        out[f"{q}_ci95"] = None
        if len(measured) >= 2:
            _, lo, hi = runs_interval(np.array([r[q] for r in measured]))
            out[f"{q}_ci95"], out["ci_method"] = [float(lo), float(hi)], ACROSS_RUNS
        elif measured and measured[0][f"{q}_ci95"] is not None:
            out[f"{q}_ci95"], out["ci_method"] = list(measured[0][f"{q}_ci95"]), WITHIN_RUN
    return out


def increment(
    runs: list[dict[str, Any]], base_runs: list[dict[str, Any]], q: str
) -> dict[str, Any]:
    """The pXX increment of ``runs`` (per-run rows of one stage) over ``base_runs``
    (those of the stage before; empty for the first stage), as row keys.

    increment_pXX: the mean of the per-round differences when the runs were made
    in rounds (:func:`_pairs`), else the difference of the two stages' means;
    increment_pXX_rounds: those per-round differences (None without rounds).
    For p50 and p99 also its interval, increment_pXX_ci95, found by
    increment_pXX_method:

    - :data:`PAIRED`, at least :data:`MIN_RUNS` rounds: Student-t on the
      per-round differences (:func:`~evaluator.statistics.significance.paired_t`);
    - :data:`WELCH`, at least :data:`MIN_RUNS` runs of each stage made apart:
      Welch–Satterthwaite on the runs' values (:func:`~evaluator.statistics.significance.welch`);
    - :data:`WITHIN_RUN`, fewer runs, each with its own within-run interval: the
      increment's interval from those (:func:`~evaluator.statistics.significance.mover`), no
      p-value (no verdict: :data:`NO_VERDICT`);

    and increment_pXX_p, the test's two-sided p-value, with increment_pXX_test the
    test itself (:class:`~evaluator.statistics.significance.TTest`), for :func:`judge` (None
    without a test).
    """
    out: dict[str, Any] = {f"increment_{q}": None, f"increment_{q}_rounds": None}
    if q in CI_QUANTILES:
        out.update({f"increment_{q}_{k}": None for k in ("ci95", "method", "p", "test")})
    pairs = _pairs(runs, base_runs, q) if base_runs else None
    if pairs is None:
        before = [r for r in base_runs if r[q] is not None]
        after = [r for r in runs if r[q] is not None]
    else:
        before, after = [a for a, _ in pairs], [b for _, b in pairs]
        out[f"increment_{q}_rounds"] = [b[q] - a[q] for a, b in pairs]
    if not before or not after:
        return out
    x, y = [r[q] for r in before], [r[q] for r in after]
    out[f"increment_{q}"] = statistics.fmean(y) - statistics.fmean(x)
    if q not in CI_QUANTILES:
        return out
    if min(len(x), len(y)) >= MIN_RUNS:
        method = PAIRED if pairs is not None else WELCH
        test = paired_t(out[f"increment_{q}_rounds"]) if pairs is not None else welch(x, y)
        (lo, hi), p = test.interval(), test.p
        out[f"increment_{q}_test"] = test
    elif all(r[f"{q}_ci95"] is not None for r in before + after):
        method, p = WITHIN_RUN, None
        terms = [(1 / len(y), r[q], *r[f"{q}_ci95"]) for r in after]
        terms += [(-1 / len(x), r[q], *r[f"{q}_ci95"]) for r in before]
        _, lo, hi = mover(terms)
    else:
        return out
    out.update({f"increment_{q}_ci95": [lo, hi], f"increment_{q}_method": method})
    out[f"increment_{q}_p"] = p
    return out


def _pairs(
    runs: list[dict[str, Any]], base_runs: list[dict[str, Any]], q: str
) -> list[tuple[dict[str, Any], dict[str, Any]]] | None:
    """(base run, run) of each round both have a pXX for, in round order; None when
    the runs were not made in rounds (a run without one, or two runs of a stage in one)."""
    by_round: list[dict[int, dict[str, Any]]] = []
    for group in (base_runs, runs):
        rounds = {r["round"]: r for r in group if r.get("round") is not None}
        if len(rounds) < len(group):  # a run without a round, or two in one
            return None
        by_round.append(rounds)
    before, after = by_round
    common = sorted(before.keys() & after.keys())
    return [
        (before[k], after[k])
        for k in common
        if before[k][q] is not None and after[k][q] is not None
    ]


def judge(tests: list[tuple[dict[str, Any], str, str]]) -> list[Resolution]:
    """Judge a table's tests together: each (entry, key, what) where the entry holds
    ``key``_p and ``key``_test (:func:`increment`) gets ``key``_p_adjusted,
    ``key``_ci95_joint (the interval at :func:`~evaluator.statistics.significance.joint_level` of
    the table's tests) and ``key``_significant (that interval excludes 0), each None
    where no test; ``key``_test is removed. Returns the differences left within noise,
    each described by its ``what``, of the p50s every table shows, of :data:`CLOCK_MS`
    or more, the smallest first."""
    tested = [t for t in tests if t[0][f"{t[1]}_test"] is not None]
    level = joint_level(len(tested))
    p_values = adjusted([entry[f"{key}_p"] for entry, key, _ in tested])
    within: list[tuple[TTest, str, str]] = []
    for (entry, key, what), p in zip(tested, p_values, strict=True):
        test: TTest = entry[f"{key}_test"]
        lo, hi = test.interval(level)
        entry[f"{key}_p_adjusted"], entry[f"{key}_ci95_joint"] = p, [lo, hi]
        entry[f"{key}_significant"] = lo > 0 or hi < 0
        if not entry[f"{key}_significant"] and key.endswith(SHOWN):
            within.append((test, what, entry[f"{key}_method"]))
    for entry, key, _ in tests:
        if entry.pop(f"{key}_test") is None:
            entry[f"{key}_p_adjusted"] = entry[f"{key}_ci95_joint"] = None
            entry[f"{key}_significant"] = None
    return [
        Resolution(
            what=what,
            difference_ms=test.estimate,
            spread_ms=sum(test.variances) ** 0.5,
            method=method,
            runs=min(test.sizes),
            needed=test.rounds_to_resolve(len(tested)),
        )
        for test, what, method in sorted(within, key=lambda t: abs(t[0].estimate))
        if abs(test.estimate) >= CLOCK_MS
    ]


def label(row: dict[str, Any], engine: bool) -> str:
    """ "stage/impl" of a row, "engine:stage/impl" with ``engine`` (a table of several
    engines) unless it is the floor's."""
    name = f"{row['stage']}/{row['impl']}"
    floor = row["stage"] == chain(row["stage"])[0].name
    return f"{row['engine']}:{name}" if engine and row.get("engine") and not floor else name


def _baseline(entry: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The row ``entry``'s increments are taken against: the nearest stage with rows of
    the same engine that it builds on (:func:`ground.stages.chain`; the floor, whatever
    engine is named), its row of the same impl, else its built-in row (else None)."""
    for step in reversed(chain(entry["stage"])[:-1]):
        candidates = {
            r["impl"]: r
            for r in rows
            if r["stage"] == step.name
            and (r["engine"] == entry["engine"] or step.builds_on is None)
        }
        if candidates:
            return candidates.get(entry["impl"]) or candidates.get(BASELINE_IMPL)
    return None
