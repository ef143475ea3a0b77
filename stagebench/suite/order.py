"""The order a suite runs its stages in: a round each, every stage once.

A round's order is drawn from one seeded generator (the seed and every round's order
are printed and kept in comparison.json). Run in ladder order, a host that slows down
over the suite would make every later stage look costlier, and repeats run back to back
would understate how much the next run differs. In a shared Spark application the first
round has a fixed order instead (:func:`first_round_order`): what the JIT has yet to
compile there depends on how long the application has run, and the later rounds, in
random order, come when it has run for minutes.
"""

import random
from dataclasses import dataclass

from engines.registry import chosen
from ground.stages import deepest_first, stage
from stagebench.report.order import order_kind
from stagebench.suite.entry import Entry, label, parts


@dataclass(frozen=True)
class Order:
    """The seed of a suite's order, each round's (stage, impl) in the order run, and
    whether the first round took :func:`first_round_order` instead of a random one."""

    seed: int
    rounds: list[list[Entry]]
    fixed_first: bool = False
    engine: str = ""
    """The engine of the entries that name none (``--engine``; "": each stage's own)."""

    def lines(self) -> list[str]:
        """One line per round: "round 2: join, floor, ingest"; custom variants and
        another trigger named, and every engine when the rounds hold several."""
        return [
            f"round {k}: "
            + ", ".join(
                self._named(s) if i == "builtin" else f"{self._named(s)} ({i})" for s, i in order
            )
            for k, order in enumerate(self.rounds, 1)
        ]

    def _named(self, key: str) -> str:
        """``key`` with its engine before it ("spark:join") when the rounds hold several
        engines' stages and it names none (the floor stays the floor)."""
        named, name, _ = parts(key)
        engines = {parts(s)[0] or self.engine for order in self.rounds for s, _ in order}
        if named or len(engines) < 2:
            return key
        found = chosen(self.engine or None, name).name
        return key if found == "floor" else f"{found}:{key}"

    def kind(self) -> str:
        """How the rounds are ordered, with the seed (:func:`order_kind`)."""
        return order_kind(self.seed, len(self.rounds), self.fixed_first)

    def describe(self) -> str:
        """The order as a sentence, with its seed."""
        return f"{self.kind()}: {'; '.join(self.lines())}"

    def as_json(self) -> dict:
        """comparison.json's ``order``: the seed, each round's "stage/impl" as run
        (``--stages``' own form: "tumbling/custom", "tumbling-union/builtin@real-time")
        and whether the first round's order was the fixed one."""
        return {
            "seed": self.seed,
            "rounds": [[label(s, i) for s, i in o] for o in self.rounds],
            "fixed_first": self.fixed_first,
        }


def round_orders(
    stages: list[Entry], repeat: int, seed: int, fixed_first: bool = False, engine: str = ""
) -> Order:
    """``repeat`` rounds, each a permutation of ``stages`` drawn from one generator
    seeded with ``seed``: the same seed gives the same suite order. With
    ``fixed_first`` the first round is :func:`first_round_order` instead (the later
    rounds are the same as without it)."""
    rng = random.Random(seed)
    rounds = [rng.sample(stages, len(stages)) for _ in range(repeat)]
    if fixed_first:
        rounds[0] = first_round_order(stages)
    return Order(seed, rounds, fixed_first, engine)


def first_round_order(stages: list[Entry]) -> list[Entry]:
    """The first round's order in a shared Spark application: the window stages, then
    the stages that run no Spark (the floor), then the other stateful ones (join), the
    stateless Spark stages (ingest, parse) last, each group deepest first.

    The shorter a stage's micro-batches, the more of its latency is code the JIT may
    still be compiling minutes into the application's life, so the stateless stages go
    last, when the application has run longest. A Spark stage measured straight after
    a window stage settled late (join after 64–80 s instead of 32–38), so the floor,
    which runs no Spark, comes between them. The figures:
    docs/method.md#one-application-per-suite."""

    def key(item: Entry) -> tuple[int, int, int]:
        named, name, _ = parts(item[0])
        s = stage(name)
        warms_up = chosen(named, name).warms_up
        group = 0 if s.window else 1 if not warms_up else 2 if s.stateful else 3
        return group, *deepest_first(s.name)

    return sorted(stages, key=key)
