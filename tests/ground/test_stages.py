"""The stage table: what each stage builds on, and the ladder a suite runs by default."""

from ground.stages import LADDER, MAIN_LINE, chain, stage


def test_each_stage_builds_on_the_one_before_it_on_the_ladder():
    assert [s.name for s in chain("sliding")] == [
        "floor", "ingest", "parse", "join", "tumbling", "sliding"
    ]  # fmt: skip
    assert [s.name for s in chain("floor")] == ["floor"]


def test_a_variant_branches_off_where_its_plan_does():
    union = stage("tumbling-union")
    assert [s.name for s in chain(union.name)] == ["floor", "ingest", "parse", "tumbling-union"]
    assert union.variant_of == "tumbling" and union.identity == stage("tumbling").identity
    assert union.updates and not stage("tumbling").updates
    assert "tumbling-union" not in MAIN_LINE


def test_every_chain_ends_at_the_floor_and_follows_the_ladders_order():
    for s in LADDER:
        steps = chain(s.name)
        assert steps[0].name == "floor"
        positions = [LADDER.index(step) for step in steps]
        assert positions == sorted(positions)
