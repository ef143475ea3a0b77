"""Where stagebench keeps caches and state: the user's directories, never the repo."""

import os
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
