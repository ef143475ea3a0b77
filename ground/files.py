"""Files written whole or not at all, and text read with one line saying what is wrong.

Every result document and state file is written through :func:`write` or
:func:`replacing`: into a temporary file of a unique name in the target's directory,
synced to the disk, then renamed over the target (``os.replace``), so a killed process, a
pulled plug or a full disk leaves the former file or none, never half a document, and
two writers never share a temporary name. :func:`writable_dir` checks a results
directory before a run starts anything, and :func:`read_text` reads a file the user
gives. Every failure is one :class:`ground.errors.FileError` naming the path and the cause.
"""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ground.errors import FileError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


MODE = 0o666 & ~_umask()
"""The mode ``open()`` gives a new file; mkstemp's own 0600 would hide results from the
group or the web server that reads them."""


def cause(err: OSError) -> str:
    """Why an operating system call failed, in its own words ("No space left on device")."""
    return err.strerror or str(err)


@contextlib.contextmanager
def replacing(path: Path, binary: bool = False, private: bool = False) -> Iterator[IO[Any]]:
    """A file (UTF-8 text, or ``binary``) whose content replaces ``path`` once the block
    ends without an error; ``private``: of mode 0600, for secrets handed to a child
    process. FileError naming ``path`` when it cannot be written."""
    try:
        fd, part = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    except OSError as err:
        raise FileError(f"cannot write {path}: {cause(err)}") from err
    encoding, newline = (None, None) if binary else ("utf-8", "")
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=encoding, newline=newline) as out:
            yield out
            out.flush()
            os.fchmod(out.fileno(), 0o600 if private else MODE)
            os.fsync(out.fileno())
        os.replace(part, path)
    except OSError as err:
        raise FileError(f"cannot write {path}: {cause(err)}") from err
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


def write(path: Path, data: str | bytes, private: bool = False) -> None:
    """Replace ``path``'s content with ``data`` (text as UTF-8), whole or not at all;
    ``private``: of mode 0600."""
    with replacing(path, binary=isinstance(data, bytes), private=private) as out:
        out.write(data)


def writable_dir(path: Path) -> Path:
    """``path``, created with its parents when missing; FileError naming it when it
    cannot be, or a file cannot be written in it (:func:`unwritable`)."""
    if path.exists() and not path.is_dir():
        raise FileError(f"cannot write in {path}: it is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FileError(f"cannot create {path}: {cause(err)}") from err
    if why := unwritable(path):
        raise FileError(f"cannot write in {path}: {why}")
    return path


def unwritable(directory: Path) -> str | None:
    """Why a file cannot be written in ``directory`` (read-only, no permission, full),
    found by writing a byte to the disk in a file without a name; None when it can."""
    try:
        with tempfile.TemporaryFile(dir=directory) as probe:
            probe.write(b"\0")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as err:
        return cause(err)
    return None


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; FileError naming ``what`` it is ("config file") and
    the path when it is missing, a directory, unreadable, or not UTF-8 (the line and
    column of its first bad byte)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise FileError(f"{what} {path}: not found") from err
    except IsADirectoryError as err:
        raise FileError(f"{what} {path}: a directory, not a file") from err
    except OSError as err:
        raise FileError(f"{what} {path}: cannot be read: {cause(err)}") from err
    return decode(data, f"{what} {path}")


def decode(data: bytes, where: str, first_line: int = 1) -> str:
    """``data`` as UTF-8 text; FileError naming ``where`` it is from, and the line
    (counted from ``first_line``) and column of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = first_line + data.count(b"\n", 0, err.start)
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise FileError(
            f"{where}: line {line}, column {column}: byte 0x{data[err.start]:02x} is not "
            "UTF-8 (save the file as UTF-8)"
        ) from err
