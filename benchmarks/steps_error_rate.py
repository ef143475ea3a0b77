"""How often the history's step test (:mod:`stagebench.history.steps`) finds a step that is
not there, and how often it finds one that is, on simulated series shaped like ours.

A series is ``points`` results of one stage, oldest first: its true level times the
host's factor (an AR(1) drift from result to result, sd 5 %, φ 0.5) times the result's
own (Student-t with 4 degrees of freedom, sd 5 %: runs of one join differed by up to
19 %), the model of ``verdicts_error_rate.py``; each point carries a within-run 95 %
interval of ±3 %. No Kafka, no engine; seeded, so two runs print the same figures.

- ``null``: a flat series; the share of series with any step (target ≤ 5 %), and the
  share whose newest point the gate of ``history --steps --tolerance 10`` fails (≤ 1 %).
- ``step``: the level rises by 10, 20 or 30 % at point 20 of 30; the share of series
  with a step found there (±1 point), and with a step anywhere else.
- ``newest``: the level rises at the newest point (1 point after it) or two points
  before it (2 and 3 points after); the share the gate fails with a 10 % tolerance.

    python benchmarks/steps_error_rate.py [--series 2000] [--seed 0]
"""

import argparse
import json

import numpy as np

from stagebench.history.steps import THRESHOLD, find_steps, worse_level

HOST_SD, HOST_PHI, RUN_SD, RUN_DF = 0.05, 0.5, 0.05, 4
POINTS, STEP_AT, TOLERANCE = 30, 20, 0.10


def series(rng: np.random.Generator, levels: np.ndarray) -> list[float]:
    """One simulated series of the given true levels."""
    host = np.empty(len(levels))
    host[0] = rng.normal(0, HOST_SD)
    innovation = HOST_SD * np.sqrt(1 - HOST_PHI**2)
    for i in range(1, len(levels)):
        host[i] = HOST_PHI * host[i - 1] + rng.normal(0, innovation)
    run = rng.standard_t(RUN_DF, len(levels)) * RUN_SD / np.sqrt(RUN_DF / (RUN_DF - 2))
    return list(levels * np.exp(host) * np.exp(run))


def _intervals(values: list[float]) -> list[list[float]]:
    return [[v * 0.97, v * 1.03] for v in values]


def null(rng: np.random.Generator, n: int, threshold: float) -> dict:
    anywhere = gate = 0
    for _ in range(n):
        values = series(rng, np.full(POINTS, 100.0))
        steps = find_steps(values, _intervals(values), threshold)
        anywhere += bool(steps)
        gate += worse_level(steps, len(values), TOLERANCE) is not None
    return {"figure": "null", "series": n, "any_step": anywhere / n, "gate_fails": gate / n}


def step(rng: np.random.Generator, n: int, threshold: float, rise: float) -> dict:
    found = elsewhere = 0
    levels = np.where(np.arange(POINTS) < STEP_AT, 100.0, 100.0 * (1 + rise))
    for _ in range(n):
        values = series(rng, levels)
        at = [s.index for s in find_steps(values, _intervals(values), threshold)]
        found += any(abs(i - STEP_AT) <= 1 for i in at)
        elsewhere += any(abs(i - STEP_AT) > 1 for i in at)
    return {"figure": "step", "rise": rise, "series": n, "found": found / n,
            "other_steps": elsewhere / n}  # fmt: skip


def newest(rng: np.random.Generator, n: int, threshold: float, rise: float, after: int) -> dict:
    fails = 0
    levels = np.where(np.arange(POINTS) < POINTS - after, 100.0, 100.0 * (1 + rise))
    for _ in range(n):
        values = series(rng, levels)
        steps = find_steps(values, _intervals(values), threshold)
        fails += worse_level(steps, len(values), TOLERANCE) is not None
    return {"figure": "newest", "rise": rise, "points_after": after, "series": n,
            "gate_fails": fails / n}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=2000, help="series per figure")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=THRESHOLD, help="the test's")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n, threshold = args.series, args.threshold
    rows = [null(rng, n, threshold)]
    rows += [step(rng, n, threshold, rise) for rise in (0.1, 0.2, 0.3)]
    rows += [newest(rng, n, threshold, rise, after) for rise in (0.2, 0.3) for after in (1, 2, 3)]
    for row in rows:
        print(json.dumps(row))
    met = rows[0]["any_step"] <= 0.05 and rows[0]["gate_fails"] <= 0.01
    targets = {"null any_step": "<= 0.05", "null gate_fails": "<= 0.01"}
    print(json.dumps({"threshold": threshold, "targets": targets, "met": met}))


if __name__ == "__main__":
    main()
