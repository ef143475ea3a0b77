"""Reference results as data: finished suites and capacity searches kept in
docs/reference-data/, and the docs' measured figures rendered from them.

Measured figures in the docs are rendered from stored results, never typed: a hand
edit of a number would otherwise pass unnoticed. ``store`` copies the small files of a
suite (its comparison.json, each run's summary.json, which carries the run's machine,
versions and commit) into ``docs/reference-data/<suite>/``, the runs inside the suite's
directory, where :func:`ground.rundir.suite_run` looks first; of a capacity search, its
capacity.json (which carries its machine and versions). ``render`` rewrites every block
(:mod:`stagebench.reference.blocks`) of README.md and docs/*.md from the stored data;
tests/test_readme.py checks that the docs still hold exactly that.

    python -m stagebench.reference store results/<UTC time>-suite-<id>
    python -m stagebench.reference store results/<UTC time>-capacity-<stage>-<id>
    python -m stagebench.reference render
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from evaluator.model.summary_file import load_summary
from ground import rundir
from ground.errors import ConfigError, StagebenchError
from stagebench.reference.blocks import Block, blocks, body, rewrite
from stagebench.reference.data import PAPERS, REFERENCE_DIR, stored

ROOT = Path(__file__).resolve().parents[2]
"""The work tree this module runs from: the docs and data it keeps."""
README = Path("README.md")
GENERATED = tuple(
    Path("docs") / name
    for name in ("results-schema.md", "comparison-schema.md", "capacity-schema.md")
)
"""Docs generated from the result models (:mod:`evaluator.files.result_schema`,
:mod:`stagebench.capacity.schema`), never rendered here."""


def documents(root: Path) -> list[Path]:
    """The docs that may hold blocks, relative to ``root``: README.md, then docs/*.md."""
    docs = sorted(p.relative_to(root) for p in (root / "docs").glob("*.md"))
    return [d for d in [README, *docs] if d not in GENERATED and (root / d).is_file()]


def store(results_dir: Path, root: Path) -> Path:
    """Copy the small files of the suite or capacity search ``results_dir`` into
    ``root``'s docs/reference-data/<its name>/ and return that directory. Everything is
    read first, so a directory whose files are missing or unreadable stores nothing; one
    stored already is refused, as results are written once."""
    try:
        kind = rundir.kind(results_dir)
    except ConfigError:
        kind = "run"
    if kind == "run":
        raise ConfigError(
            f"{results_dir} is neither a suite directory (no {rundir.COMPARISON}) nor a "
            f"capacity search's (no {rundir.CAPACITY})"
        )
    target = root / REFERENCE_DIR / results_dir.name
    if target.exists():
        raise ConfigError(f"{target} exists already: stored results are never overwritten")
    if kind == "suite":
        _store_suite(results_dir, target)
    else:
        _store_capacity(results_dir, target)
    return target


def _store_suite(suite_dir: Path, target: Path) -> None:
    """The suite's comparison.json and each of its runs' summary.json, a run's in a
    directory of the run's name inside ``target``."""
    run_dirs = [r.path for r in rundir.suite_runs(suite_dir)]
    for run_dir in run_dirs:
        load_summary(run_dir)
    target.mkdir(parents=True)
    shutil.copyfile(suite_dir / rundir.COMPARISON, target / rundir.COMPARISON)
    for run_dir in run_dirs:
        (target / run_dir.name).mkdir()
        shutil.copyfile(run_dir / rundir.SUMMARY, target / run_dir.name / rundir.SUMMARY)


def _store_capacity(search_dir: Path, target: Path) -> None:
    """The search's capacity.json only: its probes' runs are not needed to show it."""
    source = search_dir / rundir.CAPACITY
    try:
        doc = json.loads(source.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"{source} cannot be read ({err})") from err
    if not isinstance(doc, dict) or "capacity_mps" not in doc:
        raise ConfigError(f"{source} is not a capacity search's answer this version reads")
    target.mkdir(parents=True)
    shutil.copyfile(source, target / rundir.CAPACITY)


def render(root: Path) -> dict[str, list[str]]:
    """Rewrite every block of ``root``'s docs (:func:`documents`) from the stored data;
    each doc that holds blocks → their markers. Nothing is written unless every block
    renders. ConfigError when no doc has a block: where a table goes is the docs' to say."""
    texts: dict[Path, tuple[str, str]] = {}
    rendered: dict[str, list[Block]] = {}
    for doc in documents(root):
        text = (root / doc).read_text()
        found = blocks(text)
        if not found:
            continue
        try:
            bodies = {block: body(root, block, doc.parent) for block in found}
        except ConfigError as err:
            raise ConfigError(f"{doc.as_posix()}: {err}") from err
        texts[doc] = (text, rewrite(text, bodies))
        rendered[doc.as_posix()] = list(found)
    if not rendered:
        raise ConfigError(_nowhere(root))
    for doc, (text, new) in texts.items():
        if new != text:
            (root / doc).write_text(new)
    return {doc: [block.label for block in found] for doc, found in rendered.items()}


def _nowhere(root: Path) -> str:
    """What to do when no doc holds a block: which markers to put where, for which data."""
    suites, searches = stored(root, "suite"), stored(root, "capacity")
    which = (
        f"SUITE: one of {', '.join(suites)}"
        if suites
        else "store a suite first: python -m stagebench.reference store RESULTS/SUITE_DIR"
    )
    searched = f" (SEARCH: one of {', '.join(searches)})" if searches else ""
    return (
        f"{README} and docs/*.md have no reference block: put the lines "
        f"'<!-- reference-table: SUITE -->' and '<!-- /reference-table -->' where a suite's "
        f"table goes ({which}); '<!-- reference-papers: SUITE -->' … "
        f"'<!-- /reference-papers -->' for the papers beside it; "
        f"'<!-- reference-capacity: SEARCH,SEARCH -->' … '<!-- /reference-capacity -->' "
        f"for capacity searches{searched}"
    )


HELP = f"""\
store RESULTS_DIR copies a finished suite (its {rundir.COMPARISON} and each run's
{rundir.SUMMARY}) or capacity search (its {rundir.CAPACITY}) into
{REFERENCE_DIR.as_posix()}/<its name>/, once. render rewrites, in {README} and
docs/*.md, every block between an opening and a closing marker, each on a line of
its own:

  <!-- reference-table: SUITE --> ... <!-- /reference-table -->
      the table `stagebench compare {REFERENCE_DIR.as_posix()}/SUITE` prints
  <!-- reference-capacity: SEARCH1,SEARCH2 --> ... <!-- /reference-capacity -->
      the table `stagebench capacity --repeat N` ends with, and each search's line
  <!-- reference-papers: SUITE --> ... <!-- /reference-papers -->
      the papers' latencies ({PAPERS.as_posix()}) beside the suite's

each followed by a line saying when, on what machine and with which engine, Kafka and
stagebench commit the data was measured, with links to it."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stagebench.reference",
        description="Keep finished suites and capacity searches as reference data and\n"
        "render the docs' measured figures from them.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    keep = commands.add_parser(
        "store",
        help=f"copy a suite's {rundir.COMPARISON} and its runs' {rundir.SUMMARY}, or a "
        f"capacity search's {rundir.CAPACITY}, into {REFERENCE_DIR.as_posix()}/<dir name>/",
    )
    keep.add_argument(
        "results_dir", type=Path, help="a suite's or a capacity search's directory under results/"
    )
    commands.add_parser(
        "render", help=f"rewrite the reference blocks of {README} and docs/*.md (see below)"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "store":
            target = store(args.results_dir, ROOT)
            kinds = ("capacity",) if (target / rundir.CAPACITY).is_file() else ("table", "papers")
            markers = " or ".join(
                f"'<!-- reference-{k}: {target.name} -->' … '<!-- /reference-{k} -->'"
                for k in kinds
            )
            print(f"stored {target}; a doc shows it between {markers} once they are there: "
                  "python -m stagebench.reference render")  # fmt: skip
        else:
            for doc, labels in render(ROOT).items():
                print(f"rendered {doc}: {'; '.join(labels)}")
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    return 0
