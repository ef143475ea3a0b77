"""summary.json on disk: its schema version, and the function that reads it back.

The evaluator writes a run's summary once (:mod:`evaluator.files.report`); everything that
reads one later (compare, suites, capacity reports, the history, the docs' reference
data) goes through :func:`load_summary`, so a summary of a schema this version does not
know is refused in one place, with one line, instead of failing somewhere inside a table
on a key that moved.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.model.record import from_dict
from ground import rundir
from ground.errors import EvaluationError
from ground.versioned import read_versioned

if TYPE_CHECKING:  # the result model imports pandas, which a command's --help leaves alone
    from evaluator.model.result import Summary

SCHEMA_VERSION = 1
"""The version written into every summary.json (``schema_version``); raised whenever a
key changes its meaning or disappears, and the only version :func:`load_summary` reads.
``config`` is the run's configuration as it was, not a key of this schema: Spark's
settings left ``[run]`` and ``[pipeline]`` for ``engine.spark`` without a new version,
and the comparison reads the old places as the new
(:data:`evaluator.comparison.differences.BEFORE_ENGINE_TABLES`)."""


def is_incomplete(summary: "Summary") -> bool:
    """A run with missing outputs, or outputs that contradict their inputs (not trusted):
    its latencies describe part of the job's work, and the commands say so."""
    return bool(summary.records.missing) or summary.trusted is False


def load_summary(run_dir: Path | str) -> "Summary":
    """summary.json of ``run_dir`` as its :class:`~evaluator.model.result.Summary`; a key a
    summary of this schema version may lack (a section added since) is None.
    EvaluationError naming the file when it is missing, not a JSON object, of another
    schema version than :data:`SCHEMA_VERSION` (:func:`ground.versioned.read_versioned`:
    a summary must carry its version), or lacks a key every summary has."""
    from evaluator.model.result import Summary

    path = Path(run_dir) / rundir.SUMMARY
    doc = read_versioned(path, SCHEMA_VERSION, redo="evaluate the run")
    try:
        return from_dict(Summary, doc)
    except (KeyError, TypeError, AttributeError) as err:
        raise EvaluationError(f"{path} is not a whole stagebench summary: {err!r}") from err
