"""docs/results-schema.md is what the result model says: regenerate it after a change."""

from evaluator.result_schema import PAGE, schema_markdown


def test_the_committed_schema_page_is_the_generated_one():
    assert PAGE.read_text() == schema_markdown(), (
        "docs/results-schema.md differs from evaluator/result.py: "
        "run python -m evaluator.result_schema"
    )
