"""``suite --repeat auto``: as many rounds as the table's verdicts need, within a budget.

The suite runs :data:`~evaluator.comparison.increments.MIN_RUNS` rounds (the fewest that
give verdicts), then plans once: every p50 difference still within noise
(:class:`~evaluator.comparison.increments.Resolution`, of 1 ms or more) names the rounds
its spread says it needs, and the suite runs as many rounds in all as the largest of those
that fit the budget, at the pace of the first rounds; when none fits, it stops at three.
Every verdict is then made once, on all the rounds, with the same joint intervals as any
table's. Planned once rather than looked at after every round, because a table judged
again and again until a difference crosses calls more of them significant by chance;
``benchmarks/verdicts_error_rate.py`` checks by simulation that the plan keeps the error
rate of a fixed number of rounds.
"""

from dataclasses import dataclass

from evaluator.comparison.increments import MIN_RUNS, Resolution
from evaluator.statistics.significance import MAX_ROUNDS


@dataclass(frozen=True)
class Plan:
    """The rounds a suite runs in all, and why (the line it prints)."""

    rounds: int
    reason: str


def plan_rounds(unresolved: list[Resolution], round_s: float, left_s: float) -> Plan:
    """After :data:`MIN_RUNS` rounds that took ``round_s`` seconds each on average, with
    ``left_s`` seconds of the budget left: the rounds to run in all (``unresolved``: the
    table's differences within noise, as :func:`~evaluator.comparison.increments.judge`
    lists them)."""
    spare = int(left_s // round_s) if round_s > 0 else 0
    affordable = min(MIN_RUNS + max(spare, 0), MAX_ROUNDS)
    if not unresolved:
        return Plan(MIN_RUNS, "every difference of 1 ms or more is told from noise")
    fits = [r for r in unresolved if r.needed is not None and r.needed <= affordable]
    if not fits:
        smallest = unresolved[0]
        needs = f"{smallest.needed} rounds" if smallest.needed else f"over {MAX_ROUNDS}"
        return Plan(
            MIN_RUNS,
            f"the budget holds {affordable} rounds, fewer than any difference within noise "
            f"needs (the smallest, {smallest.what}: {needs})",
        )
    widest = max(fits, key=lambda r: r.needed or 0)
    resolved = len(fits)
    return Plan(
        widest.needed or MIN_RUNS,
        f"{widest.needed} rounds in all, the most that {resolved} of the {len(unresolved)} "
        f"differences within noise need ({widest.what}), of the {affordable} the budget holds",
    )
