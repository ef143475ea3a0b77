"""Every file of a run directory and of a suite directory, named once, and where the
runs a suite lists are.

A run directory ``results/<UTC time>-<stage>-<run id>/`` is written by three
hands: the bench (configuration, status, resources, the publisher's summary),
the engine's job (its configuration, progress and readiness) and the evaluator
(summary, latencies, report). Each file is written once and never overwritten.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from ground.errors import ConfigError, EvaluationError

# written by the bench before and while the run executes
CONFIG: Final = "config.json"
"""The effective configuration of every concern, with each value's source."""
STATUS: Final = "status.json"
"""``complete``, ``failed`` (with the error) or ``interrupted``, and the run's time marks."""
PUBLISHER: Final = "publisher.json"
"""What the publisher sent: per topic and second, send lag, delivery errors."""
RESOURCES: Final = "resources.csv"
"""CPU, memory and JVM heap of every process of the run, and of the machine, per second."""
RUN: Final = "run.json"
"""What the evaluator needs to know about the run (topics, stage, period marks)."""
CHECKPOINT: Final = "checkpoint"
"""The job's checkpoints and state (unless the run names another root)."""

# the engine's job's
PIPELINE: Final = "pipeline.json"
"""The pipeline's configuration: the bench writes it, the engine's job reads it."""
PIPELINE_LOG: Final = "pipeline.log"
READY: Final = "pipeline.ready"
"""Created by the job once its query runs and its source is initialised."""
PROGRESS: Final = "engine_progress.jsonl"
"""The job's progress events, one JSON object a line (:mod:`engines.base`)."""
STOPPED: Final = "pipeline.stopped"
"""Created by a shared session (:attr:`engines.base.Engine.session`) once it has stopped
the run's query."""
FAILED: Final = "pipeline.failed"
"""The error of a run's query that failed in a shared application."""

# a shared session's directory (a suite's ``application/``: Spark's application)
APPLICATION: Final = "application"
APPLICATION_CONF: Final = "application.json"
APPLICATION_LOG: Final = "application.log"
APPLICATION_READY: Final = "application.ready"
"""Created by the session, holding its id, once it runs."""

# the evaluator's
SUMMARY: Final = "summary.json"
LATENCIES: Final = "latencies.parquet"
LATENCY_HLOG: Final = "latencies.hlog"
"""The measured latencies as an HdrHistogram log, one interval histogram per broker second."""
TIMESERIES: Final = "timeseries.csv"
REPORT: Final = "report.md"

# a suite directory (results/<UTC time>-suite-<id>/)
COMPARISON: Final = "comparison.json"
COMPARISON_MD: Final = "comparison.md"

# a capacity search's directory (results/<UTC time>-capacity-<stage>-<id>/), which holds
# one run directory per probe
CAPACITY: Final = "capacity.json"
CAPACITY_MD: Final = "capacity.md"

# a set of capacity searches run by one command (results/<UTC time>-capacities-<id>/):
# the searches' directories beside it, named in its capacities.json
CAPACITIES: Final = "capacities.json"

# every results directory: a run's, a suite's and a capacity search's, written by the bench
REPORT_HTML: Final = "report.html"
"""One self-contained page of the directory's results, its plots' scripts embedded."""


Kind = Literal["run", "suite", "capacity", "capacities"]


def suite_run(name: str, suite_dir: Path) -> Path:
    """Where a run that ``suite_dir``'s comparison.json names (by the path it was written
    at) is now. First a directory of its name inside the suite directory: a suite kept
    with its runs (docs/reference-data/ keeps one so) reads its own copies, even where the
    originals still exist. Else where it was written; else the directory of its name beside
    the suite, where a suite writes its runs, for results that moved."""
    written = Path(name)
    inside = suite_dir / written.name
    if inside.is_dir():
        return inside
    return written if written.is_dir() else suite_dir.parent / written.name


@dataclass(frozen=True)
class SuiteRun:
    """One run a suite's comparison.json lists: its row's stage and implementation, the
    round it was made in (None when the suite recorded none) and where it is now."""

    stage: str
    impl: str
    round: int | None
    path: Path


STAMP_FORMAT: Final = "%Y%m%dT%H%M%SZ"
"""The UTC time every results directory's name starts with (runs, suites, searches)."""


def dir_name(what: str, ident: str, now: datetime | None = None) -> str:
    """A results directory's name: its UTC start (now by default), what it holds, its id."""
    return f"{(now or datetime.now(UTC)).strftime(STAMP_FORMAT)}-{what}-{ident}"


def started_at(name: str) -> datetime | None:
    """The UTC time a results directory's ``name`` starts with; None when it has none."""
    try:
        return datetime.strptime(name.split("-", 1)[0], STAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def suite_runs(suite_dir: Path) -> list[SuiteRun]:
    """Every run ``suite_dir``'s comparison.json lists, in its rows' (ladder) order, each
    where :func:`suite_run` finds it; EvaluationError naming the file when it is missing
    or not a suite's comparison this version reads."""
    path = suite_dir / COMPARISON
    try:
        rows = json.loads(path.read_text())["stages"]
        return [
            SuiteRun(row["stage"], row["impl"], number, suite_run(name, suite_dir))
            for row in rows
            for name, number in zip(row["run_dirs"], row["run_rounds"], strict=True)
            if name
        ]
    except (OSError, KeyError, TypeError, ValueError) as err:
        raise EvaluationError(
            f"{path} is not a suite's comparison this version reads ({err}); use its run "
            "directories instead"
        ) from err


def kind(path: Path) -> Kind:
    """Which results directory ``path`` is, by the file that only that kind holds;
    ConfigError naming ``path`` when it is none of them (a path given by mistake)."""
    kinds = ((COMPARISON, "suite"), (CAPACITY, "capacity"), (CAPACITIES, "capacities"),
             (SUMMARY, "run"))  # fmt: skip
    for name, found in kinds:
        if (path / name).is_file():
            return found  # type: ignore[return-value]
    if not path.is_dir():
        raise ConfigError(f"{path} does not exist or is not a directory")
    raise ConfigError(
        f"{path} is not a results directory: it holds neither {SUMMARY} (a run), "
        f"{COMPARISON} (a suite), {CAPACITY} (a capacity search) nor {CAPACITIES} (a set of "
        "them)"
    )


def side_runs(paths: list[Path]) -> list[Path]:
    """The run directories one side stands for: a suite directory its runs, a run
    directory itself; EvaluationError naming anything else."""
    out: list[Path] = []
    for path in paths:
        found = kind(path)
        if found in ("capacity", "capacities"):
            raise EvaluationError(
                f"{path} is a capacity search: compare its probes' run directories instead"
            )
        out += [r.path for r in suite_runs(path)] if found == "suite" else [path]
    return out


def ladder_runs(paths: list[Path]) -> tuple[list[Path], list[int] | None]:
    """The runs to compare and their rounds: a single suite directory (one with a
    comparison.json) stands for its runs and the rounds they were made in
    (:func:`suite_runs`); run directories stand for themselves, without
    rounds."""
    if len(paths) != 1 or not (paths[0] / COMPARISON).is_file():
        return list(paths), None
    runs = suite_runs(paths[0])
    rounds = [r.round for r in runs if r.round is not None]
    return [r.path for r in runs], rounds if len(rounds) == len(runs) else None
