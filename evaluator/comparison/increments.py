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

The tests of one table are corrected together by Holm's method.
"""

import statistics
from typing import Any

import numpy as np

from evaluator.comparison.engines import EngineDifference, engine_differences
from evaluator.comparison.result import ComparisonRow
from evaluator.comparison.rows import CI_QUANTILES, QUANTILES
from evaluator.confidence import runs_interval
from evaluator.recovery import section as recovery
from evaluator.significance import ALPHA, PAIR_DRIFT, holm, mover, pace_spread, paired_t, welch
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
Key = tuple[str | None, str, str]
"""A row's runs: (engine, stage, impl)."""


def _key(row: dict[str, Any]) -> Key:
    return row.get("engine"), row["stage"], row["impl"]


def aggregate(rows: list[dict[str, Any]]) -> tuple[list[ComparisonRow], list[EngineDifference]]:
    """One row per (engine, stage, impl) from per-run rows
    (:func:`~evaluator.comparison.rows.run_row`, with their ``round`` or None): means,
    spreads, intervals, caveats and increments, ordered by the stage ladder, then engine
    and implementation; and the differences between engines on each stage they share
    (:mod:`evaluator.comparison.engines`). The verdicts of both are corrected together
    (:func:`~evaluator.significance.holm`)."""
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
    _judge(out, between)
    return [ComparisonRow(**entry) for entry in out], [EngineDifference(**d) for d in between]


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
      per-round differences (:func:`~evaluator.significance.paired_t`);
    - :data:`WELCH`, at least :data:`MIN_RUNS` runs of each stage made apart:
      Welch–Satterthwaite on the runs' values (:func:`~evaluator.significance.welch`);
    - :data:`WITHIN_RUN`, fewer runs, each with its own within-run interval: the
      increment's interval from those (:func:`~evaluator.significance.mover`), no
      p-value (no verdict: :data:`NO_VERDICT`);

    and increment_pXX_p, the test's two-sided p-value (None without a test).
    """
    out: dict[str, Any] = {f"increment_{q}": None, f"increment_{q}_rounds": None}
    if q in CI_QUANTILES:
        out.update({f"increment_{q}_{k}": None for k in ("ci95", "method", "p")})
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
        _, lo, hi, p = test
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


def _judge(rows: list[dict[str, Any]], between: list[dict[str, Any]]) -> None:
    """increment_pXX_p_holm and increment_pXX_significant of every row, pXX_p_holm and
    pXX_significant of every difference between engines: the p-values of the table's
    tests adjusted together (:func:`~evaluator.significance.holm`); None where no test."""
    tests = [
        (entry, f"{prefix}{q}")
        for entries, prefix in ((rows, "increment_"), (between, ""))
        for entry in entries
        for q in CI_QUANTILES
    ]
    for entry, key in tests:
        entry[f"{key}_p_holm"] = entry[f"{key}_significant"] = None
    tested = [(entry, key) for entry, key in tests if entry[f"{key}_p"] is not None]
    adjusted = holm([entry[f"{key}_p"] for entry, key in tested])
    for (entry, key), p in zip(tested, adjusted, strict=True):
        entry[f"{key}_p_holm"] = p
        entry[f"{key}_significant"] = p < ALPHA


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
