"""Reference results as data: a finished suite kept in docs/reference-data/, and the
README's sample table rendered from it.

Measured figures in the docs are rendered from stored results, never typed: a hand
edit of a number would otherwise pass unnoticed. ``store`` copies the small files of a
suite (its comparison.json, each run's summary.json, which carries the run's machine,
versions and commit) into ``docs/reference-data/<suite>/``, the runs inside the suite's
directory, where :func:`ground.rundir.suite_run` looks first. ``render`` rewrites every
block of README.md between ``<!-- reference-table: <suite> -->`` and
``<!-- /reference-table -->`` with the table ``stagebench compare`` prints for that
stored suite and one line saying what it was measured on; tests/test_readme.py checks
that the README still holds exactly that.

    python -m stagebench.reference store results/<UTC time>-suite-<id>
    python -m stagebench.reference render
"""

import argparse
import contextlib
import json
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluator.compare import compare
from evaluator.comparison_table import format_table
from evaluator.summary_file import read_summary
from ground import rundir
from ground.errors import ConfigError, StagebenchError
from stagebench.commands.compare import ladder_runs

ROOT = Path(__file__).resolve().parents[1]
"""The work tree this module runs from: the README and docs it keeps."""
REFERENCE_DIR = Path("docs") / "reference-data"
"""Where stored suites live, relative to the work tree."""
README = "README.md"

BLOCK = re.compile(
    r"(?P<open><!-- reference-table: (?P<name>[^\s>]+) -->\n)(?P<body>.*?)"
    r"(?P<close><!-- /reference-table -->)",
    re.S,
)
"""A rendered block of the README: its opening marker naming the suite, its body, its end."""


def stored(root: Path) -> list[str]:
    """The names of the suites stored under ``root``'s docs/reference-data/, sorted."""
    where = root / REFERENCE_DIR
    if not where.is_dir():
        return []
    return sorted(d.name for d in where.iterdir() if (d / rundir.COMPARISON).is_file())


def store(suite_dir: Path, root: Path) -> Path:
    """Copy ``suite_dir``'s comparison.json and each of its runs' summary.json into
    ``root``'s docs/reference-data/<suite dir name>/ (a run's in a directory of the run's
    name inside it) and return that directory. Every summary is read first, so a suite
    whose runs are missing or unreadable stores nothing; a suite stored already is
    refused, as results are written once."""
    if rundir.kind(suite_dir) != "suite":
        raise ConfigError(f"{suite_dir} is not a suite directory (no {rundir.COMPARISON})")
    target = root / REFERENCE_DIR / suite_dir.name
    if target.exists():
        raise ConfigError(f"{target} exists already: stored results are never overwritten")
    run_dirs = [r.path for r in rundir.suite_runs(suite_dir)]
    for run_dir in run_dirs:
        read_summary(run_dir)
    target.mkdir(parents=True)
    shutil.copyfile(suite_dir / rundir.COMPARISON, target / rundir.COMPARISON)
    for run_dir in run_dirs:
        (target / run_dir.name).mkdir()
        shutil.copyfile(run_dir / rundir.SUMMARY, target / run_dir.name / rundir.SUMMARY)
    return target


def table(root: Path, name: str) -> str:
    """The table ``stagebench compare docs/reference-data/<name>`` prints from the root of
    the work tree: run paths in its warnings read relative to it, so that every clone
    renders the same text. Runs that differ in more than stage are shown as the suite
    showed them, under a NOT COMPARABLE line."""
    with contextlib.chdir(root):
        run_dirs, rounds = ladder_runs([REFERENCE_DIR / name])
        return format_table(compare(run_dirs, allow_mixed=True, rounds=rounds))


def _one(values: Iterable[Any]) -> str:
    """The distinct values recorded, in order, joined by " / "; "unknown" for none."""
    return " / ".join(dict.fromkeys(str(v) for v in values if v)) or "unknown"


def measured_with(name: str, suite: Mapping[str, Any], summaries: list[dict[str, Any]]) -> str:
    """One line: when, on what machine (cores, the processor recorded), with which Spark,
    Kafka and stagebench commit the stored suite ``name`` was measured, and where its
    data is; ``suite`` is its comparison.json, ``summaries`` its runs' summary.json."""
    meta = [s.get("metadata") or {} for s in summaries]
    # the runs' own starts (UTC); the suite's writing when they recorded none
    started = [m["started_at"] for m in meta if m.get("started_at")] or [suite.get("created_at")]
    dates = sorted(str(t)[:10] for t in started if t)
    if not dates:
        when = "on an unknown date"
    else:
        when = f"on {dates[0]}" if dates[0] == dates[-1] else f"from {dates[0]} to {dates[-1]}"
    machines = [m.get("machine") or {} for m in meta]
    cores = _one(m.get("cores") or (s.get("machine") or {}).get("cores")
                 for m, s in zip(machines, summaries, strict=True))  # fmt: skip
    processor = _one(m.get("processor") for m in machines)
    machine = f"{cores} cores" + ("" if processor == "unknown" else f" ({processor})")
    versions = [s.get("versions") or {} for s in summaries]
    brokers = _one(((s.get("machine") or {}).get("broker") or {}).get("kind") for s in summaries)
    kafka = _one(v.get("kafka_broker") for v in versions)
    data = (REFERENCE_DIR / name).as_posix()
    return (
        f"Measured {when}, {machine}, PySpark {_one(v.get('pyspark') for v in versions)}, "
        f"Kafka {kafka} ({brokers} broker), stagebench commit "
        f"`{_one(v.get('stagebench_commit') for v in versions)}`; data: [{data}]({data}/)."
    )


def block(root: Path, name: str) -> str:
    """The body of the README's block for the stored suite ``name``: its table in a
    ``text`` fence, then the line of :func:`measured_with`."""
    suite_dir = root / REFERENCE_DIR / name
    if not (suite_dir / rundir.COMPARISON).is_file():
        raise ConfigError(
            f"{README} names reference suite {name}, which {REFERENCE_DIR} does not hold "
            f"(stored: {', '.join(stored(root)) or 'none'})"
        )
    run_dirs = [r.path for r in rundir.suite_runs(suite_dir)]
    suite = json.loads((suite_dir / rundir.COMPARISON).read_text())
    line = measured_with(name, suite, [read_summary(d) for d in run_dirs])
    return f"```text\n{table(root, name)}\n```\n\n{line}\n"


def blocks(readme: str) -> dict[str, str]:
    """Each block of ``readme``: the suite its marker names → its body as it stands."""
    return {m["name"]: m["body"] for m in BLOCK.finditer(readme)}


def rewrite(readme: str, bodies: Mapping[str, str]) -> str:
    """``readme`` with each block's body replaced by ``bodies``[the suite it names]."""
    return BLOCK.sub(lambda m: m["open"] + bodies[m["name"]] + m["close"], readme)


def render(root: Path) -> list[str]:
    """Rewrite every block of ``root``'s README.md from the stored data; the suites it
    names. ConfigError when it has none: where the table goes is the README's to say."""
    path = root / README
    readme = path.read_text()
    names = list(blocks(readme))
    if not names:
        suites = stored(root)
        which = (
            f"SUITE: one of {', '.join(suites)}"
            if suites
            else "store a suite first: python -m stagebench.reference store RESULTS/SUITE_DIR"
        )
        raise ConfigError(
            f"{path} has no reference table: put the lines '<!-- reference-table: SUITE -->' "
            f"and '<!-- /reference-table -->' where it goes ({which})"
        )
    path.write_text(rewrite(readme, {name: block(root, name) for name in names}))
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stagebench.reference",
        description="Keep a finished suite as reference data and render README.md from it.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    keep = commands.add_parser(
        "store",
        help=f"copy a suite's {rundir.COMPARISON} and its runs' {rundir.SUMMARY} "
        f"into {REFERENCE_DIR}/<suite dir name>/",
    )
    keep.add_argument("suite_dir", type=Path, help="a suite directory under results/")
    commands.add_parser("render", help=f"rewrite {README}'s reference-table blocks")
    args = parser.parse_args(argv)
    try:
        if args.command == "store":
            target = store(args.suite_dir, ROOT)
            print(f"stored {target}; {README} shows it between the lines "
                  f"'<!-- reference-table: {target.name} -->' and '<!-- /reference-table -->' "
                  "once they are there: python -m stagebench.reference render")  # fmt: skip
        else:
            print(f"rendered {README} from {', '.join(render(ROOT))}")
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
