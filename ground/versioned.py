"""A results directory's JSON documents read back, their schema version checked.

summary.json (:mod:`evaluator.model.summary_file`), comparison.json and capacity.json
(:mod:`stagebench.results.documents`) are read through :func:`read_versioned`, so a
document of a version this stagebench does not read is refused with one line naming
it, the same way for each.
"""

import json
from pathlib import Path
from typing import Any

from ground.errors import EvaluationError


def read_versioned(
    path: Path, version: int, *, unversioned: int | None = None, redo: str | None = None
) -> dict[str, Any]:
    """The JSON object at ``path``, of ``schema_version`` ``version``; EvaluationError
    naming the file when it is missing, not valid JSON, not an object, or of another
    version. ``unversioned``: the version of a document without ``schema_version``
    (None: such a document is refused); ``redo``: what makes the file anew ("evaluate
    the run"), suggested when it is missing or of another version."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise EvaluationError(f"{path} not found" + (f": {redo} first" if redo else "")) from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise EvaluationError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(doc, dict):
        raise EvaluationError(f"{path} is not a stagebench document (not a JSON object)")
    found = doc.get("schema_version", unversioned)
    if found != version or isinstance(found, bool):
        has = "no schema_version" if found is None else f"schema_version {found!r}"
        raise EvaluationError(
            f"{path} has {has}; this stagebench reads schema_version {version} only: "
            "read it with the stagebench that wrote it" + (f", or {redo} again" if redo else "")
        )
    return doc
