"""How often the evaluator's intervals cover and its verdicts err, on simulated latency.

Per-second latency is a stationary AR(1) level (φ 0.5 and 0.8), the autocorrelation
real runs show: a slow micro-batch or a GC pause lasts several seconds. No Kafka, no
Spark; seeded, so two runs print the same figures. Six measurements:

- ``intervals``: records of 60 and 300 s, each the second's level (sd 10 ms) plus its
  own noise (sd 10 ms) around 100 ms; the share of 95 % intervals
  (:func:`evaluator.statistics.confidence.percentile_interval`) holding the true p50 and p99, and
  the share of slope intervals (:func:`evaluator.statistics.steady.trend`) holding 0 on the
  per-second medians of a flat series. Target: ≥ 93 % each.
- ``steady``: per-second p50 of 100 ms whose AR(1) wander (φ = 0.8) has an sd of
  ``jitter`` of it, flat or rising 20 % over the period; the shares of each verdict.
  Targets: on flat series "rising" or "falling" (a false alarm) ≤ 10 %; on a 20 % rise
  "steady" ≤ 10 % (detected ≥ 90 %). With a 10 % jitter, 60 s cannot tell a 10 % drift
  from the wander: most verdicts are "undetermined".
- ``warmup``: a per-second p50 still falling 15 %/min (the same jitter), looked at as the
  runner looks (:func:`evaluator.statistics.steady.is_settled` every 2 s from 240 to 300 s, windows
  of 60 s): the share whose warm-up ended although the latency still fell. Target:
  < 10 %. Beside it, the share of flat series that settled by 300 s: what the strictness
  costs (a run that does not settle warms up the full 300 s and says so).

- ``warm_start``: the same check with the windows of a run in a warmed-up shared
  application (``warm_settle_window_s``, 14 s), where the JIT has compiled what the
  query runs and what is left to settle is the query's own start: a per-second p50
  starting at ``1 + START_EXCESS`` times its level and decaying to it with a time
  constant of 10, 15 or 20 s (``START_TAUS_S``), looked at every 2 s from 30 s. The
  share of warm-ups ended while the excess was still above 5 % of the level, and the
  median second they ended at, flat series beside. Target: < 10 % for starts of up to
  ``START_TARGET_TAU_S`` (15 s). Three windows of 14 s can end a warm-up at 42 s at the
  earliest, when a 10 s start has decayed to 1.5 % and a 15 s one to 6 %; the 20 s
  start, 12 % above its level then, shows where these windows stop protecting. A slow
  drift (the 15 %/min fall above) passes them: they rest on the application's warm-up
  having removed it.
- ``worth``: minutes of independent per-second medians (100 ms, sd 10 ms, whole
  milliseconds): the share the trend takes to be worth fewer than 5 and fewer than 10
  independent seconds (``effective_seconds``), where all 60 are. Target: fewer than 5
  in at most 1 %: such a minute's steadiness interval reaches the slopes between
  neighbouring seconds, far wider than the latency moved.
- ``level``: where the latency settles after a fault (:mod:`evaluator.recovery`): a
  baseline of ``LEVEL_BEFORE_S`` seconds at 100 ms and a level of 60 s at 130 ms, each
  per-second p50 an AR(1) wander (φ 0.5 and 0.8, sd 10 %) plus noise of its own (sd
  5 %); the share of the level's intervals (:func:`evaluator.statistics.steady.level`) holding its
  true median, and of the offsets' (:func:`evaluator.statistics.significance.ratio_mover`) holding
  the true +30 %. Target: ≥ 90 % each.

Prints one JSON line per figure, then a summary line with every target.

    python benchmarks/statistics_coverage.py [--series 1000] [--seed 0]
"""

import argparse
import json
import math
from collections import Counter
from collections.abc import Callable

import numpy as np
from scipy import stats

from evaluator.statistics.confidence import percentile_interval
from evaluator.statistics.significance import ratio_mover
from evaluator.statistics.steady import is_settled, level, trend

MEAN_MS, LEVEL_SD_MS, RECORD_SD_MS = 100.0, 10.0, 10.0
RECORDS_PER_S = 50
TRUE_MS = {
    q: MEAN_MS + float(stats.norm.ppf(q / 100)) * math.hypot(LEVEL_SD_MS, RECORD_SD_MS)
    for q in (50.0, 99.0)
}
PHIS = (0.5, 0.8)
LENGTHS_S = (60, 300)
JITTERS = (0.03, 0.10)
RISE = 0.20
FALL_PER_MIN = 0.15
LOOKS_S = np.arange(240.0, 301.0, 2.0)
WINDOW_S = 60.0
WARM_WINDOW_S = 14.0
WARM_LOOKS_S = np.arange(30.0, 301.0, 2.0)
START_EXCESS = 1.0
START_TAUS_S = (10.0, 15.0, 20.0)
START_TARGET_TAU_S = 15.0
LEVEL_BEFORE_S, LEVEL_AFTER_S, LEVEL_OFFSET = 20, 60, 0.30
TARGETS = {"coverage": 0.93, "false_alarm": 0.10, "missed_rise": 0.10, "early_stop": 0.10,
           "few_worth": 0.01, "level_coverage": 0.90}  # fmt: skip

IntervalFn = Callable[[np.ndarray, np.ndarray], dict[float, tuple[float, float]] | None]
TrendFn = Callable[[np.ndarray, np.ndarray], tuple[tuple[float, float], str]]
SettledFn = Callable[[np.ndarray, np.ndarray], bool]


def ar1(rng: np.random.Generator, n: int, phi: float, sd: float) -> np.ndarray:
    """A stationary AR(1) series of ``n`` values with marginal sd ``sd``."""
    shocks = rng.normal(0.0, sd * math.sqrt(1 - phi**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + shocks[i]
    return out


def records(rng: np.random.Generator, seconds: int, phi: float) -> tuple[np.ndarray, np.ndarray]:
    """(second of each record, latency ms): the second's AR(1) level plus the record's noise."""
    level = ar1(rng, seconds, phi, LEVEL_SD_MS)
    second = np.repeat(np.arange(seconds), RECORDS_PER_S)
    return second, MEAN_MS + level[second] + rng.normal(0, RECORD_SD_MS, second.size)


def new_interval(second: np.ndarray, latency: np.ndarray) -> dict[float, tuple[float, float]]:
    return percentile_interval(second, latency, (50.0, 99.0))


def new_trend(seconds: np.ndarray, values: np.ndarray) -> tuple[tuple[float, float], str]:
    t = trend(seconds, values)
    return t.ci95, t.verdict


def new_settled(seconds: np.ndarray, values: np.ndarray) -> bool:
    return is_settled(seconds, values, WINDOW_S)


def intervals(
    interval: IntervalFn, slope: TrendFn, series: int, seed: int
) -> list[dict[str, float | int | None]]:
    """Coverage of the p50, p99 and slope intervals per φ and length."""
    rows = []
    for phi in PHIS:
        for length in LENGTHS_S:
            rng = np.random.default_rng([seed, int(phi * 10), length])
            hits: Counter[str] = Counter()
            given = 0
            for _ in range(series):
                second, latency = records(rng, length, phi)
                bounds = interval(second, latency)
                if bounds is not None:
                    given += 1
                    for q, (lo, hi) in bounds.items():
                        hits[f"p{q:g}"] += lo <= TRUE_MS[q] <= hi
                medians = np.median(latency.reshape(length, RECORDS_PER_S), axis=1)
                (lo, hi), _ = slope(np.arange(float(length)), medians)
                hits["slope"] += lo <= 0 <= hi
            rows.append(
                {
                    "figure": "coverage",
                    "phi": phi,
                    "seconds": length,
                    "given": given / series,
                    "p50": hits["p50"] / given if given else None,
                    "p99": hits["p99"] / given if given else None,
                    "slope": hits["slope"] / series,
                }
            )
    return rows


def steady(verdict: TrendFn, series: int, seed: int) -> list[dict[str, float | int | str]]:
    """Shares of each verdict on flat series and on a 20 % rise, per jitter and length."""
    rows = []
    for jitter in JITTERS:
        for length in LENGTHS_S:
            rng = np.random.default_rng([seed, int(jitter * 100), length, 1])
            seconds = np.arange(float(length))
            rise = 1 + RISE * seconds / seconds[-1]
            for name, shape in (("flat", np.ones(length)), ("rise 20 %", rise)):
                calls = Counter(
                    verdict(seconds, MEAN_MS * (shape + ar1(rng, length, 0.8, jitter)))[1]
                    for _ in range(series)
                )
                rows.append(
                    {
                        "figure": "steady",
                        "series": name,
                        "jitter": jitter,
                        "seconds": length,
                        **{v: calls[v] / series for v in sorted(calls)},
                    }
                )
    return rows


def warmup(settled: SettledFn, series: int, seed: int) -> list[dict[str, float | int]]:
    """Share of falling series whose warm-up ended before 300 s, and of flat ones."""
    rows = []
    seconds = np.arange(0.0, LOOKS_S[-1] + 1)
    falling = (1 - FALL_PER_MIN) ** (seconds / 60)
    for jitter in JITTERS:
        rng = np.random.default_rng([seed, int(jitter * 100), 2])
        ended: Counter[str] = Counter()
        for _ in range(series):
            for name, shape in (("falling", falling), ("flat", np.ones(seconds.size))):
                values = 1000 * shape * (1 + ar1(rng, seconds.size, 0.8, jitter))
                ended[name] += any(
                    settled(seconds[seconds <= t], values[seconds <= t]) for t in LOOKS_S
                )
        rows.append(
            {
                "figure": "warmup",
                "jitter": jitter,
                "falling_ended": ended["falling"] / series,
                "flat_settled": ended["flat"] / series,
            }
        )
    return rows


def warm_start(series: int, seed: int) -> list[dict[str, float | int | None]]:
    """When the short windows of a warmed-up application end a start transient's warm-up."""
    rows = []
    seconds = np.arange(0.0, WARM_LOOKS_S[-1] + 1)
    for tau in START_TAUS_S:
        excess = START_EXCESS * np.exp(-seconds / tau)
        for jitter in JITTERS:
            rng = np.random.default_rng([seed, int(jitter * 100), 3, int(tau)])
            early, ends = 0, {"start": [], "flat": []}
            for _ in range(series):
                for name, shape in (("start", 1 + excess), ("flat", np.ones(seconds.size))):
                    values = 1000 * shape * (1 + ar1(rng, seconds.size, 0.8, jitter))
                    end = next(
                        (
                            t
                            for t in WARM_LOOKS_S
                            if is_settled(
                                seconds[seconds <= t], values[seconds <= t], WARM_WINDOW_S
                            )
                        ),
                        None,
                    )
                    if end is not None:
                        ends[name].append(end)
                        early += name == "start" and excess[int(end)] > 0.05
            rows.append(
                {
                    "figure": "warm_start",
                    "tau_s": tau,
                    "jitter": jitter,
                    "ended_above_5pct": early / series,
                    "start_median_end_s": float(np.median(ends["start"]))
                    if ends["start"]
                    else None,
                    "flat_median_end_s": float(np.median(ends["flat"])) if ends["flat"] else None,
                    "flat_settled_by_300s": len(ends["flat"]) / series,
                }
            )
    return rows


def worth(series: int, seed: int) -> dict[str, float | int | str]:
    """How many independent seconds a minute of independent seconds is taken to be worth."""
    rng = np.random.default_rng([seed, 4])
    seconds = np.arange(60.0)
    got = np.array(
        [trend(seconds, np.round(rng.normal(MEAN_MS, 10.0, 60))).effective_seconds
         for _ in range(series)]
    )  # fmt: skip
    return {
        "figure": "worth",
        "seconds": 60,
        "below_5": float(np.mean(got < 5)),
        "below_10": float(np.mean(got < 10)),
        "median": float(np.median(got)),
    }


def levels(series: int, seed: int) -> list[dict[str, float | int | str]]:
    """How often a settled level's interval and its offset's from a baseline cover."""
    rows = []
    for phi in PHIS:
        rng = np.random.default_rng([seed, 5, int(phi * 10)])
        level_hits = offset_hits = 0
        for _ in range(series):
            before, after = (
                mean * (1 + ar1(rng, n, phi, 0.10) + rng.normal(0, 0.05, n))
                for mean, n in ((MEAN_MS, LEVEL_BEFORE_S), (MEAN_MS * (1 + LEVEL_OFFSET),
                                                            LEVEL_AFTER_S))
            )  # fmt: skip
            base = level(np.arange(float(LEVEL_BEFORE_S)), before)
            found = level(np.arange(float(LEVEL_AFTER_S)), after)
            level_hits += found.ci95[0] <= MEAN_MS * (1 + LEVEL_OFFSET) <= found.ci95[1]
            ratio = ratio_mover((found.median_ms, *found.ci95), (base.median_ms, *base.ci95))
            offset_hits += ratio is not None and ratio[1] <= 1 + LEVEL_OFFSET <= ratio[2]
        rows.append(
            {"figure": "level", "phi": phi, "seconds": LEVEL_AFTER_S,
             "level": level_hits / series, "offset": offset_hits / series}
        )  # fmt: skip
    return rows


def run(
    interval: IntervalFn, verdict: TrendFn, settled: SettledFn, series: int, seed: int
) -> dict[str, bool]:
    """Print every figure as a JSON line; return whether each target was met."""
    coverage = intervals(interval, verdict, series, seed)
    verdicts = steady(verdict, series, seed)
    warm = warmup(settled, series, seed)
    started = warm_start(series, seed)
    independent = worth(series, seed)
    plateaus = levels(series, seed)
    for row in (*coverage, *verdicts, *warm, *started, independent, *plateaus):
        print(json.dumps(row), flush=True)
    covered = [r[k] for r in coverage for k in ("p50", "p99", "slope") if r[k] is not None]
    flat = [r for r in verdicts if r["series"] == "flat"]
    rise = [r for r in verdicts if r["series"] != "flat"]
    return {
        "coverage": min(covered) >= TARGETS["coverage"],
        "false_alarm": all(
            r.get("rising", 0) + r.get("falling", 0) <= TARGETS["false_alarm"] for r in flat
        ),
        "missed_rise": all(r.get("steady", 0) <= TARGETS["missed_rise"] for r in rise),
        "early_stop": all(r["falling_ended"] < TARGETS["early_stop"] for r in warm),
        "warm_early_stop": all(
            r["ended_above_5pct"] < TARGETS["early_stop"]
            for r in started
            if r["tau_s"] <= START_TARGET_TAU_S
        ),
        "few_worth": independent["below_5"] <= TARGETS["few_worth"],
        "level_coverage": min(min(r["level"], r["offset"]) for r in plateaus)
        >= TARGETS["level_coverage"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--series", type=int, default=1000, help="simulated series per figure (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every series (default 0)")
    args = parser.parse_args()
    met = run(new_interval, new_trend, new_settled, args.series, args.seed)
    print(json.dumps({"targets": TARGETS, "met": met, "all_met": all(met.values())}))


if __name__ == "__main__":
    main()
