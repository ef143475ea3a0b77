import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engines.spark import local_file_system
from engines.spark.local_file_system import DRIVER_CLASS_PATH, on_class_path
from engines.spark.settings import FILE_SCHEME_CONF, FILE_SYSTEM_CLASS
from ground import envvars
from ground.errors import EngineError

OURS = {FILE_SCHEME_CONF: FILE_SYSTEM_CLASS}

# Writes through the JVM's local file system as Spark's checkpoint does, and prints its
# class and the modes it left; a `chmod` first on PATH logs each fork.
WRITER = """
import json, os, sys
from engines.spark.session import build_session
from engines.spark.settings import FILE_SCHEME_CONF, FILE_SYSTEM_CLASS
root = sys.argv[2]
conf = {FILE_SCHEME_CONF: FILE_SYSTEM_CLASS} if sys.argv[1] == "jvm" else {}
spark = build_session("stagebench-test-files", "local[1]", conf)
jvm = spark.sparkContext._jvm
fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark.sparkContext._jsc.hadoopConfiguration())
path = lambda name: jvm.org.apache.hadoop.fs.Path(os.path.join(root, name))
mode = jvm.org.apache.hadoop.fs.permission.FsPermission
fs.mkdirs(path("state"), mode("750"))
fs.create(path("state/offsets.tmp"), True).close()
fs.create(path("commits.tmp"), True).close()
fs.setPermission(path("commits.tmp"), mode("600"))
onto_a_file = fs.rename(path("state/offsets.tmp"), path("commits.tmp"))
with open(os.environ["CHMOD_LOG"]) as log:
    before_sticky = sum(root in line for line in log)
fs.mkdirs(path("shared"))
fs.setPermission(path("shared"), mode("1777"))
names = ["state", "state/offsets.tmp", "commits.tmp", "shared"]
print(json.dumps({
    "class": fs.getClass().getName(),
    "modes": {n: oct(os.stat(os.path.join(root, n)).st_mode & 0o7777) for n in names},
    "chmod_before_sticky": before_sticky,
    "rename_onto_a_file": onto_a_file,
}))
spark.stop()
"""


def test_a_conf_without_the_class_is_left_as_it_is():
    conf = {"spark.master": "local[2]"}
    assert on_class_path(conf) is conf


def test_a_session_to_start_gets_the_class_on_its_driver_class_path(monkeypatch):
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_jvm", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(local_file_system, "classes_dir", lambda: Path("/cache/classes/k"))
    assert on_class_path(OURS)[DRIVER_CLASS_PATH] == "/cache/classes/k"
    users = on_class_path({**OURS, DRIVER_CLASS_PATH: "/opt/extra.jar"})[DRIVER_CLASS_PATH]
    assert users == os.pathsep.join(["/opt/extra.jar", "/cache/classes/k"])


class _Jvm:
    """A running JVM, as py4j shows it, that can or cannot load the class."""

    def __init__(self, loads: bool) -> None:
        self.loads = loads
        self.java = self
        self.lang = self
        self.Class = self

    def forName(self, name: str) -> None:
        if not self.loads:
            raise RuntimeError(f"ClassNotFoundException: {name}")


@pytest.mark.parametrize("loads", [True, False])
def test_a_running_jvm_keeps_the_setting_only_if_it_can_load_the_class(monkeypatch, caplog, loads):
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_jvm", _Jvm(loads))
    monkeypatch.setattr(local_file_system, "classes_dir", lambda: Path("/cache/classes/k"))
    conf = {**OURS, "spark.master": "local[2]"}
    with caplog.at_level(logging.WARNING):
        kept = on_class_path(conf)
    if loads:
        assert kept == conf
        assert not caplog.records
    else:
        assert kept == {"spark.master": "local[2]"}
        assert "--driver-class-path /cache/classes/k" in caplog.text


@pytest.mark.spark
def test_a_source_that_does_not_compile_is_a_clear_error(tmp_path, monkeypatch):
    broken = tmp_path / "LocalFileSystem.scala"
    broken.write_text("package stagebench.hadoop\nclass NioLocalFileSystem extends Missing\n")
    monkeypatch.setattr(local_file_system, "SOURCE", broken)
    monkeypatch.setenv(envvars.CACHE_DIR, str(tmp_path / "cache"))
    with pytest.raises(EngineError, match=r"could not compile LocalFileSystem.scala: .*Missing"):
        local_file_system.classes_dir.__wrapped__()
    assert not any((tmp_path / "cache" / "classes").iterdir())


@pytest.mark.spark
def test_the_class_sets_the_modes_chmod_would_without_forking_it(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    real = shutil.which("chmod")
    (fake / "chmod").write_text(f'#!/bin/sh\necho "$@" >> "$CHMOD_LOG"\nexec {real} "$@"\n')
    (fake / "chmod").chmod(0o755)
    seen = {}
    for way in ("chmod", "jvm"):
        root, log = tmp_path / way, tmp_path / f"{way}.log"
        root.mkdir()
        log.touch()
        path = f"{fake}{os.pathsep}{os.environ['PATH']}"
        env = {**os.environ, "PATH": path, "CHMOD_LOG": str(log)}
        done = subprocess.run(
            [sys.executable, "-c", WRITER, way, str(root)],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        seen[way] = json.loads(done.stdout.strip().splitlines()[-1])
        # Spark's own start forks chmod for the jars it serves, outside the root
        seen[way]["forks"] = [f for f in log.read_text().splitlines() if str(root) in f]
    hadoops, ours = seen["chmod"], seen["jvm"]
    assert hadoops["class"] != FILE_SYSTEM_CLASS  # Hive's, with PySpark's jars
    assert ours["class"] == FILE_SYSTEM_CLASS
    assert ours["modes"] == hadoops["modes"]
    assert ours["rename_onto_a_file"] is hadoops["rename_onto_a_file"] is False
    assert ours["modes"]["commits.tmp"] == "0o600"
    assert ours["modes"]["shared"] == "0o1777"
    assert hadoops["chmod_before_sticky"] >= 4  # a fork per file, directory and chmod call
    assert ours["chmod_before_sticky"] == 0
    assert len(ours["forks"]) == 1  # the sticky bit, which Java's call cannot set
    assert ours["forks"][0].startswith("1777 ")
