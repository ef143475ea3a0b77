"""Files written whole or not at all, and text read with one line saying what is wrong."""

import errno
import os
import tempfile

import pytest

from ground import files
from ground.errors import FileError


def test_a_write_replaces_the_file_whole_and_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")
    files.write(path, '{"new": 1}\n')
    files.write(tmp_path / "latencies.parquet", b"\x00PAR1")
    assert path.read_text() == '{"new": 1}\n'
    assert (tmp_path / "latencies.parquet").read_bytes() == b"\x00PAR1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latencies.parquet", "summary.json"]
    assert path.stat().st_mode & 0o777 == files.MODE  # as open() makes it, not mkstemp's 0600


def test_a_private_file_is_its_owners_alone(tmp_path):
    files.write(tmp_path / "statements.json", "secret", private=True)
    assert (tmp_path / "statements.json").stat().st_mode & 0o777 == 0o600


def test_a_write_that_fails_midway_keeps_the_former_file(tmp_path):
    path = tmp_path / "capacity.json"
    path.write_text("whole")
    with pytest.raises(RuntimeError), files.replacing(path) as out:
        out.write("half a docu")
        raise RuntimeError("killed")
    assert path.read_text() == "whole"
    assert [p.name for p in tmp_path.iterdir()] == ["capacity.json"]


def test_two_writers_of_one_file_at_once_have_temporary_files_of_their_own(tmp_path):
    path = tmp_path / "plotly.min.js"
    with files.replacing(path) as first, files.replacing(path) as second:
        first.write("first")
        second.write("second")
        assert len(list(tmp_path.iterdir())) == 2
    assert path.read_text() == "first"  # the last to finish
    assert [p.name for p in tmp_path.iterdir()] == ["plotly.min.js"]


def test_a_full_disk_is_one_error_naming_the_file_and_the_cause(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    path = tmp_path / "status.json"
    with pytest.raises(FileError) as caught:
        files.write(path, "{}")
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert caught.value.exit_code == 2
    assert not list(tmp_path.iterdir())


def test_a_write_into_a_missing_directory_names_it(tmp_path):
    with pytest.raises(FileError, match=r"cannot write .*/gone/run\.json: No such file"):
        files.write(tmp_path / "gone" / "run.json", "{}")


def test_a_writable_directory_is_made_and_an_unwritable_one_is_named(tmp_path, monkeypatch):
    made = files.writable_dir(tmp_path / "results" / "runs")
    assert made.is_dir() and not list(made.iterdir())  # the probe leaves nothing
    (tmp_path / "file").write_text("")
    with pytest.raises(FileError, match="file: it is not a directory"):
        files.writable_dir(tmp_path / "file")
    with pytest.raises(FileError, match=r"cannot create .*/file/results: Not a directory"):
        files.writable_dir(tmp_path / "file" / "results")

    def read_only(**_):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    assert files.unwritable(made) == "Read-only file system"
    with pytest.raises(FileError, match=f"cannot write in {made}: Read-only file system"):
        files.writable_dir(made)


def test_text_that_cannot_be_read_names_the_file_and_why(tmp_path):
    with pytest.raises(FileError, match=f"^config file {tmp_path}/none: not found$"):
        files.read_text(tmp_path / "none", "config file")
    with pytest.raises(FileError, match=f"^config file {tmp_path}: a directory, not a file$"):
        files.read_text(tmp_path, "config file")
    bad = tmp_path / "bench.toml"
    bad.write_bytes(b"[run]\nrate = 100\nstage = 'caf\xe9'\n")
    with pytest.raises(FileError) as caught:
        files.read_text(bad, "config file")
    assert str(caught.value) == (
        f"config file {bad}: line 3, column 13: byte 0xe9 is not UTF-8 (save the file as UTF-8)"
    )
    bad.write_text("[run]\nstage = 'café'\n", encoding="utf-8")
    assert files.read_text(bad, "config file") == "[run]\nstage = 'café'\n"


def test_a_line_decoded_alone_is_named_by_its_own_number():
    assert files.decode("ü".encode(), "replay.jsonl") == "ü"
    with pytest.raises(FileError, match=r"^replay\.jsonl: line 7, column 1: byte 0xff"):
        files.decode(b"\xff{}", "replay.jsonl", first_line=7)
