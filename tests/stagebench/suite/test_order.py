"""The order a suite runs its stages in: seeded random rounds, and the fixed first round
of a shared application."""

from stagebench.suite.entry import split_trigger
from stagebench.suite.order import Order, first_round_order, round_orders

LADDER = [("floor", "builtin"), ("ingest", "builtin"), ("join", "builtin")]
QUICK_START = [("floor", "builtin"), ("ingest", "builtin"), ("join", "builtin"),
               ("tumbling", "builtin")]  # fmt: skip


def test_each_round_is_a_seeded_permutation_of_the_stages():
    order = round_orders(LADDER, 4, seed=7)
    assert len(order.rounds) == 4 and order.seed == 7 and not order.fixed_first
    assert all(sorted(r) == sorted(LADDER) for r in order.rounds)
    assert round_orders(LADDER, 4, seed=7) == order  # the seed gives the order back
    # the rounds differ from one another and from other seeds (not the ladder every time)
    assert len({tuple(r) for r in order.rounds}) > 1
    assert round_orders(LADDER, 4, seed=8).rounds != order.rounds


def test_the_order_reads_as_rounds_with_custom_variants_named():
    order = Order(3, [[("join", "builtin"), ("tumbling", "custom")]])
    assert order.lines() == ["round 1: join, tumbling (custom)"]
    assert order.describe() == (
        "stages in random order per round (seed 3): round 1: join, tumbling (custom)"
    )
    assert order.as_json() == {
        "seed": 3,
        "rounds": [["join/builtin", "tumbling/custom"]],
        "fixed_first": False,
    }


def test_the_first_round_puts_the_windows_first_the_floor_next_and_ingest_last():
    assert first_round_order(QUICK_START) == [
        ("tumbling", "builtin"), ("floor", "builtin"), ("join", "builtin"),
        ("ingest", "builtin"),
    ]  # fmt: skip
    # every entry once, each group deepest first, a trigger read past its "@"
    ladder = [("ingest", "builtin"), ("tumbling-union@real-time", "builtin"),
              ("parse", "builtin"), ("floor", "builtin"), ("tumbling", "custom"),
              ("sliding", "builtin"), ("join", "builtin"), ("tumbling", "builtin")]  # fmt: skip
    assert first_round_order(ladder) == [
        ("sliding", "builtin"), ("tumbling", "custom"), ("tumbling", "builtin"),
        ("tumbling-union@real-time", "builtin"), ("floor", "builtin"), ("join", "builtin"),
        ("parse", "builtin"), ("ingest", "builtin"),
    ]  # fmt: skip


def test_a_fixed_first_round_leaves_the_later_rounds_as_the_seed_draws_them():
    fixed, drawn = (
        round_orders(QUICK_START, 3, 5, fixed_first=True),
        round_orders(QUICK_START, 3, 5),
    )
    assert fixed.rounds[0] == first_round_order(QUICK_START)
    assert fixed.rounds[1:] == drawn.rounds[1:] and fixed.as_json()["fixed_first"] is True
    assert fixed.describe().startswith(
        "round 1 in the shared application's order (window stages first, the floor next, the "
        "stateless Spark stages last), the others in random order (seed 5): round 1: "
        "tumbling, floor, join, ingest; round 2: "
    )
    # one round: no random order, so no seed in the sentence
    assert round_orders(QUICK_START, 1, 5, fixed_first=True).describe() == (
        "stages in the shared application's order (window stages first, the floor next, the "
        "stateless Spark stages last): round 1: tumbling, floor, join, ingest"
    )


def test_split_trigger_reads_the_mode_after_the_at():
    assert split_trigger("tumbling-union@real-time") == ("tumbling-union", "real-time")
    assert split_trigger("join") == ("join", None)


def test_a_suite_of_several_engines_names_each_stage_s_engine():
    entries = [("floor", "builtin"), ("join", "builtin"), ("flink:join", "builtin")]
    (line,) = round_orders(entries, 1, seed=3).lines()
    assert sorted(line.removeprefix("round 1: ").split(", ")) == [
        "flink:join", "floor", "spark:join"
    ]  # fmt: skip
    (alone,) = round_orders(entries[:2], 1, seed=3).lines()  # one engine: as given
    assert sorted(alone.removeprefix("round 1: ").split(", ")) == ["floor", "join"]
    (flink,) = round_orders([("join", "builtin"), ("kafka-streams:join", "builtin")], 1, 3,
                            engine="flink").lines()  # fmt: skip
    assert "flink:join" in flink and "kafka-streams:join" in flink
