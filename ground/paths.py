"""Where stagebench keeps caches and state: the user's directories, never the repo."""

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ground import envvars


def cache_dir() -> Path:
    """Downloaded jars; safe to delete, re-resolved on demand."""
    if env := os.environ.get(envvars.CACHE_DIR):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "stagebench"


def state_dir() -> Path:
    """The embedded broker's state file, config, data and logs."""
    if env := os.environ.get(envvars.HOME):
        return Path(env).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "stagebench"


@contextlib.contextmanager
def locked(path: Path, waiting: str) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` for as long as the block runs; when
    another process holds it, say ``waiting`` (one line on stderr), then wait for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(waiting, file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_lock(target: Path) -> contextlib.AbstractContextManager[None]:
    """Hold an exclusive lock on ``target``'s install (a file ``.<name>.lock`` beside it)
    for as long as the block runs: a second process installing the same cache entry waits,
    then finds it installed, instead of deleting an install in progress."""
    lock = target.parent / f".{target.name}.lock"
    return locked(lock, f"Waiting for another process that installs {target}...")
