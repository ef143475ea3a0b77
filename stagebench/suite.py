"""A suite: the stage ladder run with identical settings, then the increment table.

With ``repeat`` > 1 every stage runs several times; the table reports the
median of each percentile across repetitions and its spread (min–max), and the
increments are differences of those medians.
"""

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from evaluator.compare import Comparison, compare, plot, to_markdown
from ground import rundir
from ground.kafka.naming import new_run_id
from stagebench.console import Console
from stagebench.runner import execute
from stagebench.settings import RunConfig, Settings


def run_suite(
    stages: list[tuple[str, str]],
    repeat: int,
    base: RunConfig,
    settings: Settings,
    console: Console,
) -> tuple[Path, Comparison, list[Path]]:
    """Run every (stage, impl) ``repeat`` times.

    Returns the suite directory, the comparison and the runs with missing outputs or
    outputs that contradict their inputs (not trusted).
    """
    suite_id = new_run_id()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    suite_dir = Path(base.results_dir) / f"{stamp}-suite-{suite_id}"
    suite_dir.mkdir(parents=True)
    run_dirs, incomplete = [], []
    total = len(stages) * repeat
    for i, (stage, impl) in enumerate(s for s in stages for _ in range(repeat)):
        console.step(f"suite {suite_id}: run {i + 1} of {total}, stage {stage} ({impl})")
        result = execute(replace(base, stage=stage, impl=impl), settings, console)
        run_dirs.append(result.run_dir)
        if result.summary["records"]["missing"] or result.summary["trusted"] is False:
            incomplete.append(result.run_dir)
    # a suite keeps its runs even when they turn out not comparable; it says so loudly
    comparison = compare(run_dirs, allow_mixed=True)
    doc = {
        "suite": suite_id,
        "created_at": datetime.now(UTC).isoformat(),
        "settings": {"run": {k: v for k, v in vars(base).items() if k not in ("stage", "impl")}},
        "repeat": repeat,
        "stages": [
            {k: (str(v) if isinstance(v, Path) else v) for k, v in row.items()}
            for row in comparison.rows
        ],
        "differences": comparison.differences,
        "pace_spread": comparison.pace_spread,
    }
    (suite_dir / rundir.COMPARISON).write_text(json.dumps(doc, indent=2, default=str) + "\n")
    images = plot(comparison, suite_dir)
    note = f"Median over {repeat} repetitions per stage.\n\n" if repeat > 1 else ""
    pictures = "\n".join(f"![{p.stem}]({p.name})" for p in images)
    (suite_dir / rundir.COMPARISON_MD).write_text(
        f"# Suite {suite_id}\n\n{note}{to_markdown(comparison)}\n\n{pictures}\n"
    )
    return suite_dir, comparison, incomplete
