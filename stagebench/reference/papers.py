"""The papers' published latencies beside a stored suite's, as a Markdown table: one row
per stage and implementation papers.json gives, a column per paper, then the suite's p50
with its 95 % interval and its p99 as ``stagebench compare`` shows them."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engines.base import IMPLS
from engines.registry import NAMES, engine
from evaluator.comparison.result import ComparisonRow
from evaluator.text.number_format import format_estimate, format_exact, format_ms
from ground.stages import STAGES
from stagebench.reference.data import relative

SOURCES = Path("docs") / "method.md"
"""The doc whose "Sources" section gives the papers' full references."""
NONE = "–"
"""A cell without a figure: the paper or the suite did not measure that stage."""


def paper_cell(figure: Mapping[str, Any] | None) -> str:
    """A paper's figure: "p50 (p99)", the p99 as the paper gives it (a range, a lower
    bound, or only the end of a tail); "≈" before a median read off a figure."""
    if figure is None:
        return NONE
    p50 = ("≈" if figure.get("p50_approximate") else "") + format_exact(figure["p50_ms"])
    p99 = figure.get("p99_ms")
    if isinstance(p99, list):
        tail = "–".join(format_exact(v) for v in p99)
    elif p99 is not None:
        tail = format_exact(p99)
    elif "p99_above_ms" in figure:
        tail = f"> {format_exact(figure['p99_above_ms'])}"
    elif "tail_to_ms" in figure:
        tail = f"tail to {format_exact(figure['tail_to_ms'])}"
    else:
        return p50
    return f"{p50} ({tail})"


def suite_cell(row: ComparisonRow | None) -> str:
    """The suite's row of its comparison: "p50 [lo–hi] (p99)"."""
    if row is None:
        return NONE
    return f"{format_estimate(row.p50, row.p50_ci95)} ({format_ms(row.p99)})"


def papers_table(doc: Mapping[str, Any], rows: list[ComparisonRow], where: Path) -> str:
    """papers.json's ``doc`` beside the comparison ``rows`` of a suite, with a sentence on
    what the cells hold above it and the papers' citations, linked to their sources for a
    doc in ``where``, below it."""
    papers = doc["papers"]
    figures = [{(f["stage"], f["impl"]): f for f in p["figures"]} for p in papers]
    engines = sorted({r.engine for r in rows if r.stage != "floor"},
                     key=lambda name: NAMES.index(name) if name in NAMES else -1)  # fmt: skip
    ours = {(r.engine, r.stage, r.impl): r for r in rows}
    keys = sorted({key for paper in figures for key in paper},
                  key=lambda k: (STAGES.index(k[0]), IMPLS.index(k[1])))  # fmt: skip
    suite = (
        ["stagebench (this suite)"]
        if len(engines) < 2
        else [f"{engine(name).title if name else '?'}, this suite" for name in engines]
    )
    header = ["stage", "impl", *(p["label"] for p in papers), *suite]
    lines = [
        f"Median latency in ms at {doc['rate_mps']:,} msg/s, p99 in parentheses; this suite's "
        "median with its 95 % interval in brackets, as `stagebench compare` prints it.",
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|" + "---:|" * (len(header) - 2),
    ]
    for key in keys:
        cells = [
            *key,
            *(paper_cell(f.get(key)) for f in figures),
            *(suite_cell(ours.get((name, *key))) for name in engines or [None]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    cited = "; ".join(f"{p['label']}: {p['citation']}" for p in papers)
    sources = f"{relative(SOURCES, where)}#sources"
    lines += ["", f"Papers ([sources]({sources})): {cited}."]
    return "\n".join(lines)
