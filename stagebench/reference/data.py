"""What docs/reference-data/ holds and how a doc links to it: the stored suites (a
comparison.json with each run's summary.json), the stored capacity searches (a
capacity.json) and the papers' published figures (papers.json). Written by
:mod:`stagebench.reference.render`, read by the blocks it renders
(:mod:`stagebench.reference.blocks`).
"""

import json
import posixpath
from pathlib import Path
from typing import Any, Literal

from ground import rundir
from ground.errors import ConfigError
from stagebench.results.capacity import CapacityResult
from stagebench.results.documents import read_capacity

REFERENCE_DIR = Path("docs") / "reference-data"
"""Where stored results live, relative to the work tree."""
PAPERS = REFERENCE_DIR / "papers.json"
"""The papers' published figures beside which a suite is shown."""

Stored = Literal["suite", "capacity"]
KEPT: dict[Stored, str] = {"suite": rundir.COMPARISON, "capacity": rundir.CAPACITY}
"""The file that marks a stored directory as a suite or a capacity search."""
WHAT: dict[Stored, tuple[str, str]] = {
    "suite": ("suite", "suites"),
    "capacity": ("capacity search", "capacity searches"),
}
"""What a stored directory of each kind is called, one and several."""


def stored(root: Path, kind: Stored | None = None) -> list[str]:
    """The names of the suites and capacity searches (or only those of ``kind``) stored
    under ``root``'s docs/reference-data/, sorted."""
    where = root / REFERENCE_DIR
    if not where.is_dir():
        return []
    files = [KEPT[kind]] if kind else list(KEPT.values())
    return sorted(d.name for d in where.iterdir() if any((d / f).is_file() for f in files))


def stored_dir(root: Path, kind: Stored, name: str) -> Path:
    """The directory of the stored ``kind`` ``name``; ConfigError saying what is stored
    when it is not."""
    path = root / REFERENCE_DIR / name
    if not (path / KEPT[kind]).is_file():
        (one, several), held = WHAT[kind], ", ".join(stored(root, kind)) or "none"
        raise ConfigError(
            f"reference {one} {name} is not stored in {REFERENCE_DIR.as_posix()} "
            f"(stored {several}: {held})"
        )
    return path


def capacity_docs(root: Path, names: list[str]) -> list[CapacityResult]:
    """The capacity.json of each stored capacity search of ``names``, in that order."""
    return [read_capacity(stored_dir(root, "capacity", name)) for name in names]


def papers(root: Path) -> dict[str, Any]:
    """``root``'s papers.json: the rate of the papers' figures and each paper's label,
    citation and figures."""
    try:
        doc = json.loads((root / PAPERS).read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"{PAPERS.as_posix()} cannot be read ({err})") from err
    if not isinstance(doc, dict) or not {"papers", "rate_mps"} <= doc.keys():
        raise ConfigError(f"{PAPERS.as_posix()} holds no 'papers' and 'rate_mps'")
    return doc


def relative(target: Path, where: Path) -> str:
    """The path to ``target`` from a doc in the directory ``where``, both relative to the
    work tree: a link that holds in README.md and in docs/ alike."""
    return posixpath.relpath(target.as_posix(), where.as_posix())


def data_links(names: list[str], where: Path) -> str:
    """Markdown links to the stored directories ``names``, each shown as its path from the
    work tree, from a doc in ``where``."""
    paths = [REFERENCE_DIR / name for name in names]
    return ", ".join(f"[{p.as_posix()}]({relative(p, where)}/)" for p in paths)
