"""docs/capacity-schema.md, generated from :class:`stagebench.results.capacity.CapacityResult`.

capacity.json's keys are documented once, in the fields' ``metadata["doc"]``; this page is
made from them as the result model's pages are (:func:`evaluator.files.result_schema.record_page`),
and a unit test compares the committed page with :func:`capacity_markdown`.
``python -m stagebench.capacity.schema`` writes it.
"""

from evaluator.files.result_schema import DOCS, record_page
from stagebench.results.capacity import CapacityResult

PAGE = DOCS / "capacity-schema.md"


def capacity_markdown() -> str:
    """The page: one table of capacity.json's keys."""
    return record_page(
        "capacity.json",
        "stagebench.capacity.schema",
        CapacityResult,
        "Every capacity search's directory `results/<UTC time>-capacity-<stage>-<id>/` holds "
        "one `capacity.json`: a JSON object with these keys, in this order. How the search "
        "and its pass curve work: [capacity.md](capacity.md).",
    )


if __name__ == "__main__":
    PAGE.write_text(capacity_markdown())
    print(f"wrote {PAGE}")
