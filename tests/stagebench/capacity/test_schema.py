"""docs/capacity-schema.md is what the capacity result model says: regenerate it after a
change."""

from stagebench.capacity.schema import PAGE, capacity_markdown


def test_the_committed_capacity_page_is_the_generated_one():
    assert PAGE.read_text() == capacity_markdown(), (
        "docs/capacity-schema.md differs from stagebench/results/capacity.py: "
        "run python -m stagebench.capacity.schema"
    )
