"""comparison.json and capacity.json read back, their schema version checked.

A suite writes comparison.json (:mod:`stagebench.suite.rounds`), a capacity search
capacity.json (:class:`stagebench.capacity.result.CapacityResult`); the history, the
reports and the docs' reference data read them through here, so a document that moved
on is refused in one place with one line, as :func:`evaluator.summary_file.read_summary`
refuses a summary. Neither document carries a ``schema_version`` yet: one without it is
of version 1, the only one there is.
"""

import json
from pathlib import Path
from typing import Any

from ground import rundir
from ground.errors import EvaluationError

COMPARISON_SCHEMA_VERSION = 1
"""The version of comparison.json this stagebench reads and writes."""
CAPACITY_SCHEMA_VERSION = 1
"""The version of capacity.json this stagebench reads and writes."""


def read_comparison(suite_dir: Path | str) -> dict[str, Any]:
    """The comparison.json of ``suite_dir``."""
    return _read(Path(suite_dir) / rundir.COMPARISON, COMPARISON_SCHEMA_VERSION)


def read_capacity(search_dir: Path | str) -> dict[str, Any]:
    """The capacity.json of ``search_dir``."""
    return _read(Path(search_dir) / rundir.CAPACITY, CAPACITY_SCHEMA_VERSION)


def _read(path: Path, version: int) -> dict[str, Any]:
    """The JSON object at ``path``; EvaluationError naming the file when it is missing,
    not a JSON object, or of another schema version."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise EvaluationError(f"{path} not found") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise EvaluationError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(doc, dict):
        raise EvaluationError(f"{path} is not a stagebench document (not a JSON object)")
    found = doc.get("schema_version", 1)
    if found != version or isinstance(found, bool):
        raise EvaluationError(
            f"{path} has schema_version {found!r}; this stagebench reads schema_version "
            f"{version} only: read it with the stagebench that wrote it"
        )
    return doc
