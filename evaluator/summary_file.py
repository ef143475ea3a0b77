"""summary.json on disk: its schema version, and the functions that read it back.

The evaluator writes a run's summary once (:mod:`evaluator.report`); everything that
reads one later (compare, suites, capacity reports) goes through :func:`read_summary`
(the document) or :func:`load_summary` (the :class:`~evaluator.result.Summary`), so a
summary of a schema this version does not know is refused in one place, with one line,
instead of failing somewhere inside a table on a key that moved.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator.record import from_dict
from ground import rundir
from ground.errors import EvaluationError
from ground.versioned import read_versioned

if TYPE_CHECKING:  # the result model imports pandas, which a command's --help leaves alone
    from evaluator.result import Summary

SCHEMA_VERSION = 1
"""The version written into every summary.json (``schema_version``); raised whenever a
key changes its meaning or disappears, and the only version :func:`read_summary` reads."""


def is_incomplete(summary: "Summary") -> bool:
    """A run with missing outputs, or outputs that contradict their inputs (not trusted):
    its latencies describe part of the job's work, and the commands say so."""
    return bool(summary.records.missing) or summary.trusted is False


def load_summary(run_dir: Path | str) -> "Summary":
    """summary.json of ``run_dir`` as its :class:`~evaluator.result.Summary`, read as
    :func:`read_summary` reads it; a key a summary of this schema version may lack (a
    section added since) is None. EvaluationError naming the file and a key it lacks
    that every summary has."""
    from evaluator.result import Summary

    doc = read_summary(run_dir)
    try:
        return from_dict(Summary, doc)
    except (KeyError, TypeError, AttributeError) as err:
        path = Path(run_dir) / rundir.SUMMARY
        raise EvaluationError(f"{path} is not a whole stagebench summary: {err!r}") from err


def read_summary(run_dir: Path | str) -> dict[str, Any]:
    """summary.json of ``run_dir``; EvaluationError naming the file when it is missing,
    not a JSON object, or of another schema version than :data:`SCHEMA_VERSION`
    (:func:`ground.versioned.read_versioned`: a summary must carry its version)."""
    return read_versioned(Path(run_dir) / rundir.SUMMARY, SCHEMA_VERSION, redo="evaluate the run")
