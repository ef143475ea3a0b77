"""Cumulative comparison of evaluated runs, stage by stage (docs/method.md#reports).

Runs are grouped by (stage, implementation): one row per group, ordered by the
stage ladder, with the mean of each percentile across repetitions, its spread
(min–max) and its 95 % interval. The increment of a row is the difference of its
percentiles and those of the nearest earlier stage of the ladder present in the
comparison — its row of the same implementation, else its built-in row (custom
tumbling builds on the built-in join). It is a difference of percentiles, not a
percentile of per-record differences (the runs are separate), and labelled as
such everywhere it is shown.

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

A comparison carries its caveats: every row lists the warnings of its runs, and
runs that differ in more than stage and implementation (rate, workload,
settings, Kafka) are refused unless the caller allows a mixed comparison, which
then names the differences above the table. The machine's pace (a fixed piece
of work timed on one core before and after each run, summary.json's
``machine.pace``) is shown per row; its spread across the runs is a median
absolute deviation relative to the median, and the comparison names every
increment a host drift of that size could explain.
"""

import logging
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evaluator import plots
from evaluator.confidence import LEVEL, runs_interval
from evaluator.latency import IN_RANGE, LATENCY
from evaluator.settings_diff import differences
from evaluator.summary_file import read_summary
from ground import rundir
from ground.errors import EvaluationError
from ground.stages import STAGES

log = logging.getLogger(__name__)

QUANTILES = ("p50", "p95", "p99")
# the percentiles a run's ``confidence`` section gives intervals for
CI_QUANTILES = ("p50", "p99")
ACROSS_RUNS = "across runs"
# how an increment's interval was found
PAIRED = "rounds"
WELCH = "welch"
WITHIN_RUN = "within-run"
MIN_RUNS = 3
"""Runs of each stage (or rounds) an increment needs for a significance verdict: the
spread of two runs is a poor estimate of run-to-run variation, and with one there is none."""
ALPHA = round(1 - LEVEL, 10)
CORRECTION = "holm"
QUANTUM_VAR = 1 / 12
"""Variance (ms²) of rounding a percentile to whole milliseconds, the broker's resolution:
the least variance a run's value can be said to have. Runs whose p50s agree to the
millisecond are not evidence of no spread, and a zero spread would call any non-zero
difference certain."""
VERDICTS = ("steady", "rising", "falling", "undetermined")
MARK = "!"
INCREMENT_NOTE = (
    "the stage's pXX − that of the stage under 'over' (difference of percentiles, ms; in "
    "rounds: the mean of the per-round differences)"
)
NO_VERDICT = (
    f"fewer than {MIN_RUNS} runs of a stage: its interval combines the runs' own "
    "within-run intervals and leaves out run-to-run variation, which is larger (one join's "
    "runs differed by up to 19 % where each run's interval said ±2 %); repeat the stages "
    f"(suite --repeat {MIN_RUNS}) for a verdict"
)
BASELINE_IMPL = "builtin"
MAD_TO_SD = 1.4826
"""σ of a normal distribution over its median absolute deviation."""
PAIR_DRIFT = float(stats.norm.ppf(0.5 + LEVEL / 2)) * math.sqrt(2) * MAD_TO_SD
"""Pace spread (relative MAD) → how far apart two runs' paces fall in 95 % of pairs, for
paces spread normally: the difference of two runs has σ·√2. Three runs in a row on an idle
host spanned 12 %; a MAD does not grow with the number of runs as that range does."""


@dataclass(frozen=True)
class Comparison:
    """The rows of a comparison and what differs between its runs besides stage and
    implementation (empty when the runs are comparable)."""

    rows: list[dict[str, Any]]
    differences: list[str] = field(default_factory=list)

    @property
    def paces_ms(self) -> list[float]:
        """The pace of every run that recorded one (:func:`run_pace`)."""
        return [p for r in self.rows for p in r["run_paces_ms"] if p]

    @property
    def pace_spread(self) -> float | None:
        """:func:`pace_spread` of all the runs' paces."""
        return pace_spread(self.paces_ms)

    @property
    def pace_drift(self) -> float | None:
        """How far apart two runs' paces fall at that spread (:data:`PAIR_DRIFT`)."""
        spread = self.pace_spread
        return None if spread is None else round(spread * PAIR_DRIFT, 4)

    @property
    def host_explains(self) -> list[str]:
        """Every increment a host drift of :attr:`pace_drift` could explain
        (``increment_pXX_within_pace``), as "stage/impl +pXX (+3.0 ms)"."""
        return [
            f"{r['stage']}/{r['impl']} +{q} ({format_ms(r[f'increment_{q}'], signed=True)} ms)"
            for r in self.rows
            for q in CI_QUANTILES
            if r.get(f"increment_{q}_within_pace")
        ]

    @property
    def tests(self) -> int:
        """How many increments were tested, the count Holm's correction divides among."""
        return sum(r.get(f"increment_{q}_p") is not None for r in self.rows for q in CI_QUANTILES)

    @property
    def significance(self) -> dict[str, Any]:
        """How the increments were judged, for comparison.json: level, correction, the
        number of tests, the runs a verdict needs, and why some got none (else None)."""
        unjudged = any(
            r.get(f"increment_{q}_method") == WITHIN_RUN for r in self.rows for q in CI_QUANTILES
        )
        return {
            "level": LEVEL,
            "correction": CORRECTION,
            "tests": self.tests,
            "min_runs": MIN_RUNS,
            "no_verdict": NO_VERDICT if unjudged else None,
        }

    @property
    def pace_note(self) -> str | None:
        """The caveat when a host drift the size of the runs' pace spread could explain an
        increment."""
        explained = self.host_explains
        if not explained:
            return None
        return (
            f"a fixed piece of work took {min(self.paces_ms):g} to {max(self.paces_ms):g} ms "
            f"on one core across these runs (median absolute deviation "
            f"{self.pace_spread * 100:.1f} % of the median, so two runs' paces differ by up to "
            f"{self.pace_drift * 100:.0f} %); a host drift of that size could explain "
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

    Keys of a row: stage, impl, repetitions, p50, p95, p99 (means across the
    repetitions), p50_spread, p95_spread, p99_spread ([min, max]),
    increment_p50, increment_p95, increment_p99, increment_over (the
    "stage/impl" the increments are taken against, None for the first stage),
    increment_p50_rounds, increment_p95_rounds, increment_p99_rounds (the
    per-round differences, in round order; None without rounds), run_dir (a
    representative run: the middle one), run_dirs (all of them) and run_rounds
    (the round of each; None without rounds); and its caveats:

    - warnings: "run_dir: text" for every warning of its runs (deduplicated),
      mark: :data:`MARK` when there is any, else "";
    - p50_ci95, p99_ci95: [lo, hi], 95 % interval of the row's percentile, and
      ci_method: :data:`WITHIN_RUN` (one run: its summary's ``confidence``) or
      :data:`ACROSS_RUNS` (two or more: Student-t over the runs' values);
      None when unknown (the runs' summaries have no interval);
    - for p50 and p99, the increment's test (:func:`increment`):
      increment_pXX_ci95 ([lo, hi], unadjusted 95 %), increment_pXX_method
      (:data:`PAIRED`, :data:`WELCH` or :data:`WITHIN_RUN`), increment_pXX_p
      (two-sided p-value; None without a test), increment_pXX_p_holm (adjusted
      across the table's tests) and increment_pXX_significant (adjusted p below
      :data:`ALPHA`; None without a verdict), all None when unknown;
    - increment_pXX_within_pace: whether a host drift of ``Comparison.pace_drift``
      could explain the increment (None without paces);
    - steady: the steadiness verdict of each run ("steady", "rising",
      "falling"; None when not recorded), in the order of run_dirs;
    - run_paces_ms: each run's pace (:func:`run_pace`; None when not recorded),
      in the order of run_dirs, and pace_ms: their median.

    Runs that differ in more than stage and implementation (:func:`differences`)
    are an EvaluationError naming the differences, unless ``allow_mixed``: then
    the comparison carries them in ``Comparison.differences``.
    """
    run_dirs = [Path(d) for d in run_dirs]
    if rounds is not None and len(rounds) != len(run_dirs):
        raise ValueError(f"{len(rounds)} rounds for {len(run_dirs)} runs")
    summaries = {str(d): read_summary(d) for d in run_dirs}
    runs = [run_row(d, summaries[str(d)]) for d in run_dirs]
    for run, number in zip(runs, rounds or [None] * len(runs), strict=True):
        run["round"] = number
    rows = aggregate(runs)
    found = differences(summaries)
    if found and not allow_mixed:
        raise EvaluationError(
            "the runs differ in more than stage and implementation, so their increments "
            f"would mix conditions: {'; '.join(found)}. Compare runs made with the same "
            "settings, or allow a mixed comparison (stagebench compare --allow-mixed)"
        )
    return Comparison(rows, found)


def run_row(run_dir: Path, summary: Any = None) -> dict[str, Any]:
    """stage, impl, p50, p95, p99, run_dir, warnings, steady, p50_ci95, p99_ci95 and
    pace_ms of one evaluated run (``summary``: its summary.json, read when not given).

    EvaluationError naming the file when summary.json is missing, not JSON, of another
    schema version (:func:`evaluator.summary_file.read_summary`) or without the keys that
    version has. Intervals are None where the summary has none (the Spark engine, a
    period too short for its sections), steadiness where it has no verdict, the pace
    for a run not made by ``stagebench run``.
    """
    path = Path(run_dir) / rundir.SUMMARY
    if summary is None:
        summary = read_summary(run_dir)
    try:
        run, lat = summary["run"], summary["latency_ms"]
        confidence = summary["confidence"] or {}
        row = {
            "stage": run["stage"],
            "impl": run["impl"],
            **{q: _number(lat[q]) for q in QUANTILES},
            "run_dir": str(run_dir),
            "warnings": [str(w) for w in _list(summary["warnings"], "warnings")],
            "steady": _verdict(summary["steady_state"]),
            **{f"{q}_ci95": _bounds(confidence.get(q), q) for q in CI_QUANTILES},
            "pace_ms": run_pace((summary["machine"] or {}).get("pace")),
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(
            f"{path} is not a stagebench summary this version can compare "
            f"(missing or invalid {err}); re-evaluate the run"
        ) from err
    if row["stage"] not in STAGES:
        raise EvaluationError(f"{path}: unknown stage {row['stage']!r} (known: {STAGES})")
    return row


def run_pace(pace: Any) -> float | None:
    """One run's pace, ms: the mean of its timings before and after (either alone when
    the other is missing); None without one (a run not made by ``stagebench run``)."""
    values = [_number(pace.get(k)) for k in ("before_ms", "after_ms")] if pace else []
    known = [v for v in values if v]
    return round(statistics.fmean(known), 2) if known else None


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"percentile {value!r}")
    return float(value)


def _list(value: Any, name: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{name} {value!r}")
    return value


def _bounds(value: Any, q: str) -> list[float] | None:
    """[lo, hi] of a ``confidence`` entry; None when absent."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"confidence.{q} {value!r}")
    lo, hi = (_number(v) for v in value)
    return [lo, hi] if lo is not None and hi is not None else None


def _verdict(steady_state: Any) -> str | None:
    if steady_state is None:
        return None
    verdict = steady_state.get("verdict")
    if verdict not in VERDICTS:
        raise ValueError(f"steady_state.verdict {verdict!r}")
    return verdict


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (stage, impl) from per-run rows (:func:`run_row`, with their
    ``round`` or None): means, spreads, intervals, caveats and increments, the
    increments' verdicts corrected together (:func:`holm`); ordered by the stage
    ladder, then implementation."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["stage"], row["impl"]), []).append(row)
    spread = pace_spread([r["pace_ms"] for r in rows if r["pace_ms"]])
    out: list[dict[str, Any]] = []
    for stage, impl in sorted(groups, key=lambda k: (STAGES.index(k[0]), str(k[1]))):
        runs = groups[(stage, impl)]
        entry: dict[str, Any] = {"stage": stage, "impl": impl, "repetitions": len(runs)}
        for q in QUANTILES:
            values = [r[q] for r in runs if r[q] is not None]
            entry[q] = statistics.fmean(values) if values else None
            entry[f"{q}_spread"] = [min(values), max(values)] if values else None
        entry.update(_intervals(runs))
        entry["run_dir"] = runs[len(runs) // 2]["run_dir"]
        entry["run_dirs"] = [r["run_dir"] for r in runs]
        entry["run_rounds"] = [r.get("round") for r in runs]
        entry["steady"] = [r["steady"] for r in runs]
        entry["run_paces_ms"] = [r["pace_ms"] for r in runs]
        paces = [p for p in entry["run_paces_ms"] if p]
        entry["pace_ms"] = statistics.median(paces) if paces else None
        warnings = (f"{r['run_dir']}: {w}" for r in runs for w in r["warnings"])
        entry["warnings"] = list(dict.fromkeys(warnings))
        entry["mark"] = MARK if entry["warnings"] else ""
        out.append(entry)
    for entry in out:
        base = _baseline(entry, out)
        base_runs = groups[(base["stage"], base["impl"])] if base else []
        for q in QUANTILES:
            entry.update(increment(groups[(entry["stage"], entry["impl"])], base_runs, q))
        for q in CI_QUANTILES:
            change, before = entry[f"increment_{q}"], base[q] if base else None
            entry[f"increment_{q}_within_pace"] = (
                abs(change) <= spread * PAIR_DRIFT * before
                if None not in (change, before, spread)
                else None
            )
        entry["increment_over"] = f"{base['stage']}/{base['impl']}" if base else None
    _judge(out)
    return out


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
      per-round differences (:func:`paired_t`);
    - :data:`WELCH`, at least :data:`MIN_RUNS` runs of each stage made apart:
      Welch–Satterthwaite on the runs' values (:func:`welch`);
    - :data:`WITHIN_RUN`, fewer runs, each with its own within-run interval: the
      increment's interval from those (:func:`mover`), no p-value (no verdict:
      :data:`NO_VERDICT`);

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
    by_round = []
    for group in (base_runs, runs):
        rounds = {r.get("round"): r for r in group}
        if None in rounds or len(rounds) < len(group):
            return None
        by_round.append(rounds)
    before, after = by_round
    common = sorted(before.keys() & after.keys())
    return [
        (before[k], after[k])
        for k in common
        if before[k][q] is not None and after[k][q] is not None
    ]


def _judge(rows: list[dict[str, Any]]) -> None:
    """increment_pXX_p_holm and increment_pXX_significant of every row: the p-values
    of the table's tests adjusted together (:func:`holm`); None where no test."""
    tests = [(r, q) for r in rows for q in CI_QUANTILES if r[f"increment_{q}_p"] is not None]
    for r in rows:
        for q in CI_QUANTILES:
            r[f"increment_{q}_p_holm"] = r[f"increment_{q}_significant"] = None
    adjusted = holm([r[f"increment_{q}_p"] for r, q in tests])
    for (r, q), p in zip(tests, adjusted, strict=True):
        r[f"increment_{q}_p_holm"] = p
        r[f"increment_{q}_significant"] = p < ALPHA


def _baseline(entry: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The row ``entry``'s increments are taken against: the nearest earlier stage
    with rows, its row of the same impl, else its built-in row (else None)."""
    index = STAGES.index(entry["stage"])
    earlier = [r for r in rows if STAGES.index(r["stage"]) < index]
    if not earlier:
        return None
    nearest = max(STAGES.index(r["stage"]) for r in earlier)
    candidates = {r["impl"]: r for r in earlier if STAGES.index(r["stage"]) == nearest}
    return candidates.get(entry["impl"]) or candidates.get(BASELINE_IMPL)


# --- the statistics of increments and pace -------------------------------------


def paired_t(differences: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, lo, hi, p) of per-round differences: the 95 % Student-t interval of
    their mean (n − 1 degrees of freedom) and the two-sided p-value of mean 0.
    Needs two differences or more."""
    d = np.asarray(differences, np.float64)
    sd = max(float(d.std(ddof=1)), math.sqrt(2 * QUANTUM_VAR))  # a difference of two
    return _t(float(d.mean()), sd / math.sqrt(d.size), d.size - 1)


def welch(before: Sequence[float], after: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean(after) − mean(before), lo, hi, p): Welch's t for two independent samples
    of unequal variance, with Welch–Satterthwaite degrees of freedom. Needs two
    values or more in each."""
    a, b = np.asarray(before, np.float64), np.asarray(after, np.float64)
    va = max(float(a.var(ddof=1)), QUANTUM_VAR) / a.size
    vb = max(float(b.var(ddof=1)), QUANTUM_VAR) / b.size
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return _t(float(b.mean() - a.mean()), se, float(df))


def _t(estimate: float, se: float, df: float) -> tuple[float, float, float, float]:
    """(estimate, lo, hi, p) of a t statistic with standard error ``se`` > 0."""
    half = float(stats.t.ppf(0.5 + LEVEL / 2, df)) * se
    p = 2 * float(stats.t.sf(abs(estimate) / se, df))
    return estimate, estimate - half, estimate + half, p


def mover(terms: Iterable[tuple[float, float, float, float]]) -> tuple[float, float, float]:
    """(Σ w·θ, lo, hi) of a weighted sum of independent estimates, each term (w, θ,
    lo, hi) with its own 95 % interval, by the method of variance estimates
    recovery (Zou & Donner 2008): each bound adds in quadrature the distances from
    the estimates to the bounds on its own side (the lower bound of a term with
    negative weight comes from its upper bound). Asymmetric intervals such as a
    percentile bootstrap's stay asymmetric, and the sum stays centred on the
    estimates the intervals belong to."""
    total, below, above = 0.0, 0.0, 0.0
    for w, theta, lo, hi in terms:
        down, up = max(theta - lo, 0.0) * abs(w), max(hi - theta, 0.0) * abs(w)
        if w < 0:
            down, up = up, down
        total += w * theta
        below += down**2
        above += up**2
    return total, total - math.sqrt(below), total + math.sqrt(above)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values``, in their order: the k-th smallest
    times (m − k + 1), never below the one before it, at most 1. An adjusted value
    below α keeps the chance of any false verdict in the table at α."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def pace_spread(paces_ms: Sequence[float]) -> float | None:
    """The median absolute deviation of the runs' paces over their median: a share of
    the host's speed, directly comparable to an increment's share of the latency it is
    taken over, and, unlike a range, no larger for more runs. None with fewer than two."""
    if len(paces_ms) < 2:
        return None
    centre = statistics.median(paces_ms)
    return round(statistics.median(abs(p - centre) for p in paces_ms) / centre, 4)


# --- rendering ------------------------------------------------------------------


def format_cell(value: Any) -> str:
    """One table cell: "-" for None, numbers with thousands separators, floats to 0.1."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_ms(value: float | None, signed: bool = False, digits: int | None = None) -> str:
    """A latency in ms for the comparison tables: whole ms from 10 ms, else 0.1 ms
    (or ``digits`` decimals); a true minus sign; "+" on positive values when
    ``signed``; "-" for None."""
    if value is None:
        return "-"
    text = f"{abs(value):,.{_digits(value) if digits is None else digits}f}"
    if value < 0 and text.strip("0.,"):
        return "−" + text
    return ("+" if signed else "") + text


def _digits(value: float) -> int:
    return 0 if abs(value) >= 9.95 else 1


def format_interval(
    bounds: list[float] | None, signed: bool = False, digits: int | None = None
) -> str:
    """The interval as "[lo–hi]" with :func:`format_ms`; "" when unknown."""
    if bounds is None:
        return ""
    lo, hi = (format_ms(b, signed, digits) for b in bounds)
    return f"[{lo}–{hi}]"


def _with_interval(value: float | None, bounds: list[float] | None, signed: bool = False) -> str:
    """The value and its interval, "448 [431–466]", all to one precision: whole ms
    when any of them reaches 10 ms (finer digits would be noise), else 0.1 ms."""
    if value is None:
        return "-"
    digits = min(_digits(v) for v in (value, *(bounds or ())))
    interval = format_interval(bounds, signed, digits)
    return f"{format_ms(value, signed, digits)} {interval}".rstrip()


def _estimate(row: dict[str, Any], q: str) -> str:
    return _with_interval(row[q], row.get(f"{q}_ci95"))


def _increment_cell(row: dict[str, Any], q: str) -> str:
    """The increment and its interval; "n.s." when not significant, "n.v." without a
    verdict (:data:`NO_VERDICT`)."""
    cell = _with_interval(row[f"increment_{q}"], row.get(f"increment_{q}_ci95"), signed=True)
    if row.get(f"increment_{q}_significant") is False:
        return cell + " n.s."
    return cell + (" n.v." if row.get(f"increment_{q}_method") == WITHIN_RUN else "")


def _steady(verdicts: list[str | None]) -> str:
    """One run: its verdict; several: "3 steady", "2 steady, 1 rising"; "-" if unknown."""
    if not verdicts or all(v is None for v in verdicts):
        return "-"
    if len(verdicts) == 1:
        return verdicts[0] or "-"
    counts = Counter(v or "unknown" for v in verdicts)
    return ", ".join(f"{n} {v}" for v, n in counts.items())


# (header, left-aligned, cell of a row)
_COLUMNS = (
    ("stage", True, lambda r: r["stage"]),
    ("impl", True, lambda r: r["impl"]),
    ("p50", False, lambda r: _estimate(r, "p50")),
    ("p95", False, lambda r: format_ms(r["p95"])),
    ("p99", False, lambda r: _estimate(r, "p99")),
    ("+p50", False, lambda r: _increment_cell(r, "p50")),
    ("+p95", False, lambda r: format_ms(r["increment_p95"], signed=True)),
    ("+p99", False, lambda r: _increment_cell(r, "p99")),
    ("over", True, lambda r: r["increment_over"] or "-"),
    ("runs", False, lambda r: format_cell(r["repetitions"])),
    ("pace", False, lambda r: format_ms(r.get("pace_ms"))),
    ("steady", True, lambda r: _steady(r.get("steady") or [])),
)


def _body(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Headers and cells of the rows; the last column, "!N", refers to the Nth row
    with warnings (listed under the table by :func:`_warned`)."""
    headers = [h for h, _, _ in _COLUMNS] + [MARK]
    cells, warned = [], 0
    for r in rows:
        mark = ""
        if r.get("warnings"):
            warned += 1
            mark = f"{r.get('mark') or MARK}{warned}"
        cells.append([cell(r) for _, _, cell in _COLUMNS] + [mark])
    return headers, cells


def _notes(comparison: Comparison) -> list[list[str]]:
    """What the numbers mean, as notes of a few short phrases each: units, the
    interval methods present, increments with how they were judged, pace,
    steadiness, the marks."""
    rows = comparison.rows
    methods = {r.get("ci_method") for r in rows} - {None}
    explained = {
        WITHIN_RUN: "one run: batch means over sections of its seconds (within-run precision only)",
        ACROSS_RUNS: "several runs: Student-t interval of the runs' mean (run-to-run variation)",
    }
    if methods:
        intervals = ["[lo–hi]: 95 % interval;", *(explained[m] for m in sorted(methods))]
    else:
        intervals = ["no intervals: the runs' summaries have none (Spark engine, short period)"]
    judged = {r.get(f"increment_{q}_method") for r in rows for q in CI_QUANTILES}
    how = {
        PAIRED: "in rounds: [lo–hi] Student-t on the per-round differences;",
        WELCH: "runs made apart: [lo–hi] Welch–Satterthwaite on the runs' values;",
        WITHIN_RUN: f"n.v.: no verdict, {NO_VERDICT};",
    }
    increments = [f"+pXX: {INCREMENT_NOTE};", *(how[m] for m in how if m in judged)]
    if comparison.tests:
        increments.append(
            f"n.s.: not significant at {ALPHA * 100:.0f} % after Holm's correction across the "
            f"table's {comparison.tests} tests (the [lo–hi] are not adjusted)"
        )
    increments[-1] = increments[-1].rstrip(";")
    pace = ["pace: ms one core took for a fixed piece of work around the runs (lower: a "
            "faster host; -: not recorded);"]  # fmt: skip
    if comparison.pace_spread is not None:
        pace.append(
            f"across the runs a median absolute deviation of {comparison.pace_spread * 100:.1f} "
            f"% of the median: two runs' paces differ by up to {comparison.pace_drift * 100:.0f} %;"
        )
    return [
        ["latency in ms; p50, p95, p99: mean over the runs;", *intervals],
        increments,
        [*pace, "steady: each run's verdict on its per-second p50 trend (-: not recorded);",
         f"{MARK}N: warning N below"],
    ]  # fmt: skip


def _warned(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """("stage/impl", its warnings) of every row with warnings, in table order."""
    return [(f"{r['stage']}/{r['impl']}", list(r["warnings"])) for r in rows if r.get("warnings")]


def format_table(comparison: Comparison) -> str:
    """A plain text table for terminals: the differences between the runs above it
    (when any), notes and the numbered warnings of its rows below."""
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, left, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    lines = []
    if comparison.differences:
        lines.append(
            "NOT COMPARABLE: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines += [f"  {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"PACE: {note}", ""]
    lines += [line(headers), "  ".join("-" * w for w in widths)]
    lines += [line(b) for b in body]
    lines += ["\n    ".join(note) for note in _notes(comparison)]
    for i, (label, warnings) in enumerate(_warned(comparison.rows), 1):
        lines.append(f"{MARK}{i} {label}:")
        lines += [f"    {w}" for w in warnings]
    return "\n".join(lines)


def to_markdown(comparison: Comparison) -> str:
    """The same table in Markdown."""
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    lines = []
    if comparison.differences:
        lines.append(
            "**NOT COMPARABLE**: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines.append("")
        lines += [f"- {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"**PACE**: {note}", ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "".join("---|" if a else "---:|" for a in left))
    lines += ["| " + " | ".join(b) + " |" for b in body]
    lines.append("")
    lines += [f"- {' '.join(note)}" for note in _notes(comparison)]
    warned = _warned(comparison.rows)
    if warned:
        lines += ["", "Warnings:", ""]
        for i, (label, warnings) in enumerate(warned, 1):
            lines.append(f"{i}. {label} ({MARK}{i}):")
            lines += [f"   - {w}" for w in warnings]
    return "\n".join(lines)


def plot(comparison: Comparison, out_dir: Path, log_scale: bool = False) -> list[Path]:
    """The comparison plots: p50/p99 bars with intervals and increments, and the
    per-stage distributions side by side (from each run's latencies.parquet)."""

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = comparison.rows
    paths = [plots.increments(rows, out_dir / rundir.COMPARE_INCREMENTS, comparison.differences)]
    samples, labels = [], []
    for r in rows:
        path = Path(r["run_dir"]) / rundir.LATENCIES
        if path.exists():
            frame = pd.read_parquet(path, columns=[LATENCY, IN_RANGE])
            samples.append(frame.loc[frame[IN_RANGE], LATENCY].to_numpy())
        else:
            log.warning("%s missing: no distribution for %s", path, r["run_dir"])
            samples.append(np.zeros(0))
        labels.append(f"{r['stage']}\n({r['impl']})")
    paths.append(
        plots.distributions(labels, samples, out_dir / rundir.COMPARE_DISTRIBUTIONS, log_scale)
    )
    return paths
