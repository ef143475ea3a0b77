"""docs/results-schema.md and docs/comparison-schema.md are what the result model says:
regenerate them after a change."""

from evaluator.files.result_schema import PAGES


def test_the_committed_schema_pages_are_the_generated_ones():
    for page, markdown in PAGES.items():
        assert page.read_text() == markdown(), (
            f"docs/{page.name} differs from the result model: "
            "run python -m evaluator.files.result_schema"
        )
