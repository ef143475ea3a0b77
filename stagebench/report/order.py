"""How a suite ordered its rounds, in a sentence: written into comparison.md and report.html,
read by the suite (:mod:`stagebench.suite.order`) and by its page."""

FIXED_ORDER = (
    "the shared application's order (window stages first, the floor next, the stateless "
    "Spark stages last)"
)
"""How :func:`stagebench.suite.order.first_round_order` orders a round, in a suite's sentence."""


def order_kind(seed: int | str, repeat: int, fixed_first: bool) -> str:
    """How the rounds were ordered, for a suite's sentence: "stages in random order per
    round (seed 7)", or the fixed first round's rule first."""
    if not fixed_first:
        return f"stages in random order per round (seed {seed})"
    if repeat == 1:
        return f"stages in {FIXED_ORDER}"
    return f"round 1 in {FIXED_ORDER}, the others in random order (seed {seed})"
