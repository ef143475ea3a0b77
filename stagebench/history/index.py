"""The history of runs: an SQLite index (stdlib ``sqlite3``) of a results directory.

``run``, ``suite`` and ``capacity`` record each result here when they end, and
``stagebench history`` lists and filters it. The index holds nothing the directories
do not (:mod:`stagebench.history.entry` reads every entry from their files), so it is
rebuilt whenever it is missing, was written by another version of this schema, or is
asked to be: deleting it loses nothing. A rebuild is written beside it and moved into
place, so a reader never sees half an index.
"""

import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict
from pathlib import Path

from ground import files, rundir
from ground.errors import FileError, HistoryError, StagebenchError
from stagebench.history.entry import Entry, Figure, read_entry

log = logging.getLogger(__name__)

INDEX = "history.sqlite"
SCHEMA_VERSION = 3
"""PRAGMA user_version of the index; an index of another version is rebuilt."""
SCHEMA = """
CREATE TABLE entries (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, time TEXT NOT NULL, path TEXT NOT NULL,
    workload TEXT, rate REAL, git_commit TEXT, versions TEXT NOT NULL, machine TEXT,
    pace_ms REAL, trusted INTEGER, warnings TEXT NOT NULL, key_settings TEXT NOT NULL,
    capacity_mps REAL, capacity_ci95_mps TEXT, capacity_bracket_mps TEXT
);
CREATE TABLE figures (
    entry_id TEXT NOT NULL REFERENCES entries(id) ON DELETE CASCADE, position INTEGER,
    stage TEXT NOT NULL, impl TEXT NOT NULL, runs INTEGER, p50 REAL, p50_ci95 TEXT,
    p99 REAL, p99_ci95 TEXT, steady TEXT, engine TEXT, recovery TEXT
);
CREATE TABLE settings (
    entry_id TEXT NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    name TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL
);
CREATE INDEX figures_stage ON figures (stage, entry_id);
CREATE INDEX settings_key ON settings (key, value);
CREATE INDEX entries_time ON entries (time);
"""


def index_path(results_dir: Path) -> Path:
    return Path(results_dir) / INDEX


@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success and always closes."""
    with closing(sqlite3.connect(path, timeout=10)) as db:
        db.execute("PRAGMA foreign_keys = ON")
        with db:
            yield db


def scan(results_dir: Path) -> tuple[list[Entry], list[str]]:
    """The entries of every results directory directly under ``results_dir`` (a suite's
    runs belong to it), and a line for each directory that could not be read."""
    children = sorted(p for p in Path(results_dir).iterdir() if p.is_dir())
    members: set[str] = set()
    problems = []
    for suite in (p for p in children if (p / "comparison.json").is_file()):
        try:
            members.update(r.path.name for r in rundir.suite_runs(suite))
        except StagebenchError as err:
            problems.append(f"{suite}: its comparison.json lists no runs ({err!r})")
    entries = []
    for child in children:
        if child.name in members or not _holds_results(child):
            continue
        try:
            entries.append(read_entry(child))
        except (StagebenchError, OSError) as err:
            problems.append(str(err))
    return entries, problems


def _holds_results(path: Path) -> bool:
    return any((path / f).is_file() for f in ("summary.json", "comparison.json", "capacity.json"))


def rebuild(results_dir: Path) -> list[str]:
    """Write the index afresh from the directories; the directories it could not read."""
    target = index_path(results_dir)
    if why := files.unwritable(Path(results_dir)):
        raise FileError(f"cannot write the history index {target}: {why}")
    entries, problems = scan(results_dir)
    fresh = target.with_name(f".{INDEX}.{os.getpid()}")
    fresh.unlink(missing_ok=True)
    try:
        with _connect(fresh) as db:
            db.executescript(SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            for entry in entries:
                _insert(db, entry)
        os.replace(fresh, target)
    except (sqlite3.Error, OSError) as err:  # a disk that filled meanwhile
        why = files.cause(err) if isinstance(err, OSError) else str(err)
        raise FileError(f"cannot write the history index {target}: {why}") from err
    finally:
        fresh.unlink(missing_ok=True)
    return problems


def is_current(results_dir: Path) -> bool:
    """Whether the index exists and has this schema version."""
    path = index_path(results_dir)
    if not path.is_file():
        return False
    try:
        with _connect(path) as db:
            return bool(db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION)
    except sqlite3.Error:
        return False


def record(results_dir: Path, result_dir: Path) -> None:
    """Add (or replace) the entry of ``result_dir``; the index is rebuilt first when it
    is missing or of another version, which indexes ``result_dir`` too."""
    if not is_current(results_dir):
        rebuild(results_dir)
        return
    entry = read_entry(Path(result_dir))
    with _connect(index_path(results_dir)) as db:
        db.execute("DELETE FROM entries WHERE id = ?", (entry.id,))
        _insert(db, entry)


def record_or_warn(results_dir: Path, result_dir: Path) -> str | None:
    """:func:`record`, but a failure is returned as a one-line warning instead of raised:
    the result is in its directory whatever happens to the index, and the next
    ``stagebench history --rebuild`` indexes it."""
    try:
        record(results_dir, result_dir)
    except Exception as err:  # nothing about the index may fail a finished run
        log.debug("recording %s in the history failed", result_dir, exc_info=True)
        return (
            f"{result_dir} is not in the history ({index_path(results_dir)}: {err}); "
            "stagebench history --rebuild indexes it"
        )
    return None


def _insert(db: sqlite3.Connection, entry: Entry) -> None:
    db.execute(
        "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (entry.id, entry.kind, entry.time, entry.path, entry.workload, entry.rate, entry.commit,
         json.dumps(entry.versions), entry.machine, entry.pace_ms,
         None if entry.trusted is None else int(entry.trusted), json.dumps(entry.warnings),
         json.dumps(entry.key_settings), entry.capacity_mps,
         json.dumps(entry.capacity_ci95_mps), json.dumps(entry.capacity_bracket_mps)),
    )  # fmt: skip
    db.executemany(
        "INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(entry.id, i, f.stage, f.impl, f.runs, f.p50, json.dumps(f.p50_ci95), f.p99,
          json.dumps(f.p99_ci95), f.steady, f.engine, json.dumps(f.recovery))
         for i, f in enumerate(entry.figures)],
    )  # fmt: skip
    db.executemany(
        "INSERT INTO settings VALUES (?, ?, ?, ?)",
        [(entry.id, name, name.rpartition(".")[2], value)
         for name, value in entry.settings.items()],
    )  # fmt: skip


def entries(
    results_dir: Path,
    stage: str | None = None,
    since: str | None = None,
    settings: Sequence[tuple[str, str]] = (),
    engine: str | None = None,
) -> list[Entry]:
    """The entries, oldest first: of ``stage`` only (a suite keeps only that stage's
    figure), of ``engine`` only (likewise), from ``since`` (ISO UTC, as the index stores
    times) on, run with every (key, value) of ``settings`` (key: "trigger_interval_ms" or
    "engine.spark.trigger_interval_ms"; value as shown, "500"). The index is rebuilt first
    when missing."""
    path = index_path(results_dir)
    if not Path(results_dir).is_dir():
        raise HistoryError(f"{results_dir} is not a directory: no results to list")
    if not is_current(results_dir):
        rebuild(results_dir)
    where, params = ["1 = 1"], []
    if stage or engine:
        where.append(
            "id IN (SELECT entry_id FROM figures WHERE (? IS NULL OR stage = ?)"
            " AND (? IS NULL OR engine = ?))"
        )
        params += [stage or None, stage, engine or None, engine]
    if since:
        where.append("time >= ?")
        params.append(since)
    for key, value in settings:
        where.append(
            "id IN (SELECT entry_id FROM settings WHERE (name = ? OR key = ?) AND value = ?)"
        )
        params += [key, key, value]
    try:
        with _connect(path) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                f"SELECT * FROM entries WHERE {' AND '.join(where)} ORDER BY time, id", params
            ).fetchall()
            return [_entry(db, row, stage, engine) for row in rows]
    except (sqlite3.Error, IndexError, ValueError) as err:  # a damaged or foreign index
        raise HistoryError(f"{path}: {err}; stagebench history --rebuild writes it afresh") from err


def _entry(
    db: sqlite3.Connection, row: sqlite3.Row, stage: str | None, engine: str | None
) -> Entry:
    figures = [
        Figure(stage=f["stage"], impl=f["impl"], runs=f["runs"], engine=f["engine"],
               p50=f["p50"],
               p50_ci95=json.loads(f["p50_ci95"]), p99=f["p99"],
               p99_ci95=json.loads(f["p99_ci95"]), steady=f["steady"],
               recovery=json.loads(f["recovery"]))
        for f in db.execute("SELECT * FROM figures WHERE entry_id = ? ORDER BY position",
                            (row["id"],))
        if (not stage or f["stage"] == stage) and (not engine or f["engine"] == engine)
    ]  # fmt: skip
    settings = dict(db.execute("SELECT name, value FROM settings WHERE entry_id = ?", (row["id"],)))
    return Entry(
        id=row["id"], kind=row["kind"], time=row["time"], path=row["path"],
        workload=row["workload"], rate=row["rate"], commit=row["git_commit"],
        versions=json.loads(row["versions"]), machine=row["machine"], pace_ms=row["pace_ms"],
        trusted=None if row["trusted"] is None else bool(row["trusted"]),
        warnings=json.loads(row["warnings"]), figures=figures, settings=settings,
        key_settings=json.loads(row["key_settings"]), capacity_mps=row["capacity_mps"],
        capacity_ci95_mps=json.loads(row["capacity_ci95_mps"]),
        capacity_bracket_mps=json.loads(row["capacity_bracket_mps"]),
    )  # fmt: skip


def as_json(found: Sequence[Entry]) -> list[dict]:
    """The entries as JSON-ready dicts."""
    return [asdict(e) for e in found]
