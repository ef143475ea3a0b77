"""comparison.json and capacity.json read back, their schema version checked.

A suite writes comparison.json (:mod:`stagebench.suite.rounds`), a capacity search
capacity.json (:class:`stagebench.results.capacity.CapacityResult`); the history, the
reports and the docs' reference data read them through here, so a document that moved
on is refused in one place with one line, by the reader of summary.json too
(:func:`ground.versioned.read_versioned`). Neither document carries a ``schema_version``
yet: one without it is of version 1, the only one there is. A set of searches'
capacities.json carries its own.
"""

from pathlib import Path
from typing import Any

from ground import rundir
from ground.errors import EvaluationError
from ground.versioned import read_versioned
from stagebench.results.capacity import CapacityResult

COMPARISON_SCHEMA_VERSION = 1
"""The version of comparison.json this stagebench reads and writes."""
CAPACITY_SCHEMA_VERSION = 1
"""The version of capacity.json this stagebench reads and writes."""
CAPACITIES_SCHEMA_VERSION = 1
"""The version of capacities.json (a set of searches) this stagebench reads and writes:
``schema_version``, ``searches`` (their directories, relative to the set's) and
``table`` (the table the command printed)."""


def read_comparison(suite_dir: Path | str) -> dict[str, Any]:
    """The comparison.json of ``suite_dir``."""
    return read_versioned(
        Path(suite_dir) / rundir.COMPARISON, COMPARISON_SCHEMA_VERSION, unversioned=1
    )


def read_capacity(search_dir: Path | str) -> CapacityResult:
    """The capacity.json of ``search_dir``, as its record; EvaluationError naming a key it
    cannot do without."""
    path = Path(search_dir) / rundir.CAPACITY
    doc = read_versioned(path, CAPACITY_SCHEMA_VERSION, unversioned=1)
    try:
        return CapacityResult.from_doc(doc)
    except KeyError as err:
        raise EvaluationError(f"{path} is not a capacity search's result: no key {err}") from err
    except (TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(f"{path} is not a capacity search's result: {err}") from err


def read_capacities(set_dir: Path | str) -> dict[str, Any]:
    """The capacities.json of ``set_dir``."""
    return read_versioned(
        Path(set_dir) / rundir.CAPACITIES, CAPACITIES_SCHEMA_VERSION, unversioned=1
    )
