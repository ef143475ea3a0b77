"""The blocks of the docs rendered from docs/reference-data/, each between an opening
marker naming its data and a closing one:

- ``<!-- reference-table: SUITE -->`` … ``<!-- /reference-table -->``: the table
  ``stagebench compare`` prints for the stored suite;
- ``<!-- reference-capacity: SEARCH1,SEARCH2 -->`` … ``<!-- /reference-capacity -->``:
  what ``stagebench capacity --repeat N`` prints at its end for the stored searches, the
  table and each search's line;
- ``<!-- reference-papers: SUITE -->`` … ``<!-- /reference-papers -->``: the papers'
  published latencies (papers.json) beside the stored suite's.

Each ends with the line saying when, on what and with which versions the data was
measured (:mod:`stagebench.reference.measured`); its links hold from the doc's directory.
"""

import contextlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from evaluator.comparison.compare import Comparison, compare
from evaluator.comparison.table import format_table
from evaluator.model.summary_file import load_summary
from ground import rundir
from stagebench.capacity.table import format_table as capacity_table
from stagebench.capacity.table import headline
from stagebench.reference.data import REFERENCE_DIR, capacity_docs, papers, stored_dir
from stagebench.reference.measured import capacity_line, suite_line
from stagebench.reference.papers import papers_table
from stagebench.results.documents import read_comparison

KINDS = ("reference-table", "reference-capacity", "reference-papers")
MARKER = re.compile(
    rf"(?P<open><!-- (?P<kind>{'|'.join(KINDS)}): (?P<data>[^\s>]+) -->\n)"
    r"(?P<body>.*?)(?P<close><!-- /(?P=kind) -->)",
    re.S,
)
"""A block: its opening marker naming its kind and data, its body, its closing marker."""


class Block(NamedTuple):
    """A block's kind (one of :data:`KINDS`) and the stored data its marker names."""

    kind: str
    data: str

    @property
    def label(self) -> str:
        """As its opening marker says it."""
        return f"{self.kind}: {self.data}"


def blocks(text: str) -> dict[Block, str]:
    """Each block of the doc ``text``: its kind and data → its body as it stands."""
    return {Block(m["kind"], m["data"]): m["body"] for m in MARKER.finditer(text)}


def rewrite(text: str, bodies: Mapping[Block, str]) -> str:
    """``text`` with each block's body replaced by ``bodies``[the block]."""
    return MARKER.sub(lambda m: m["open"] + bodies[Block(m["kind"], m["data"])] + m["close"], text)


def body(root: Path, block: Block, where: Path) -> str:
    """What ``block`` holds, rendered from ``root``'s stored data, for a doc in the
    directory ``where`` (relative to ``root``)."""
    if block.kind == "reference-capacity":
        return capacity_body(root, block.data.split(","), where)
    if block.kind == "reference-papers":
        return papers_body(root, block.data, where)
    line = _suite_line(root, block.data, where)
    return f"```text\n{format_table(comparison(root, block.data))}\n```\n\n{line}\n"


def comparison(root: Path, name: str) -> Comparison:
    """What ``stagebench compare docs/reference-data/<name>`` compares, run from the root
    of the work tree: run paths in its warnings read relative to it, so that every clone
    renders the same text. Runs that differ in more than stage are kept, as the suite kept
    them, under a NOT COMPARABLE line."""
    with contextlib.chdir(root):
        run_dirs, rounds = rundir.ladder_runs([REFERENCE_DIR / name])
        return compare(run_dirs, allow_mixed=True, rounds=rounds)


def _suite_line(root: Path, name: str, where: Path) -> str:
    """The measured line of the stored suite ``name``; ConfigError when it is not stored."""
    suite_dir = stored_dir(root, "suite", name)
    run_dirs = [r.path for r in rundir.suite_runs(suite_dir)]
    suite = read_comparison(suite_dir)
    return suite_line(name, suite, [load_summary(d) for d in run_dirs], where)


def capacity_body(root: Path, names: list[str], where: Path) -> str:
    """The capacity searches ``names`` in a ``text`` fence, as the command prints them
    after its last search: their table, then one line per search."""
    docs = capacity_docs(root, names)
    searches = [f"search {i}: {headline(doc)}" for i, doc in enumerate(docs, 1)]
    text = "\n".join([capacity_table(docs), *searches])
    return f"```text\n{text}\n```\n\n{capacity_line(names, docs, where)}\n"


def papers_body(root: Path, name: str, where: Path) -> str:
    """The papers' figures beside the stored suite ``name``'s, as a Markdown table."""
    line = _suite_line(root, name, where)
    table = papers_table(papers(root), comparison(root, name).rows, where)
    return f"{table}\n\n{line}\n"
