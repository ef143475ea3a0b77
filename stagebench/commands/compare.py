"""``stagebench compare RUN_DIR...``: the cumulative stage table of evaluated runs."""

import argparse
import json
from pathlib import Path

from evaluator import compare
from ground import rundir
from ground.errors import EvaluationError


def run(args: argparse.Namespace) -> int:
    run_dirs, rounds = suite_runs(args.run_dirs)
    comparison = compare.compare(run_dirs, allow_mixed=args.allow_mixed, rounds=rounds)
    text = compare.to_markdown if args.markdown else compare.format_table
    print(text(comparison))
    if args.plots is not None:
        for path in compare.plot(comparison, args.plots, args.log_scale):
            print(f"wrote {path}")
    return 0


def suite_runs(paths: list[Path]) -> tuple[list[Path], list[int] | None]:
    """The runs to compare and their rounds: a single suite directory (one with a
    comparison.json) stands for its runs and the rounds they were made in; run
    directories stand for themselves, without rounds."""
    if len(paths) != 1 or not (paths[0] / rundir.COMPARISON).is_file():
        return list(paths), None
    suite_dir = paths[0]
    try:
        rows = json.loads((suite_dir / rundir.COMPARISON).read_text())["stages"]
        listed = [(d, k) for row in rows for d, k in zip(row["run_dirs"], row["run_rounds"],
                                                        strict=True)]  # fmt: skip
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise EvaluationError(
            f"{suite_dir / rundir.COMPARISON} is not a suite's comparison this version reads "
            f"({err}); compare its run directories instead"
        ) from err
    # the suite wrote its runs beside itself: found there when the results moved
    run_dirs = [
        d if (d := Path(name)).is_dir() else suite_dir.parent / d.name for name, _ in listed
    ]
    rounds = [k for _, k in listed]
    return run_dirs, None if None in rounds else rounds
