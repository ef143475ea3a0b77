"""The Java job compiled at first use into the user's cache: once, with the JDK's javac or,
on a runtime without one, with the Eclipse compiler (pinned jars: marked integration, as
they come from Maven Central the first time)."""

import concurrent.futures
import subprocess
import threading
from pathlib import Path

import pytest

from engines.kafka_streams import build
from ground.jvm.maven import resolve

pytestmark = pytest.mark.integration


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache for the classes (the jars stay in the user's)."""
    monkeypatch.setattr(build, "cache_dir", lambda: tmp_path)
    return tmp_path


def _main_class(classes: Path) -> Path:
    return classes / (build.MAIN.replace(".", "/") + ".class")


def test_compiled_once_then_taken_from_the_cache(fresh_cache, monkeypatch):
    jars = resolve(build.pins(), "Kafka Streams jars")
    classes = build.compiled(jars)
    assert classes.parent == fresh_cache / "kafka-streams"
    assert classes.name == f"classes-{build.source_key()}"
    assert _main_class(classes).exists()

    def no_compiler(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert build.compiled(jars) == classes


def test_a_runtime_without_javac_compiles_with_the_eclipse_compiler(fresh_cache):
    command, name = build.compiler_command(javac=Path("/nonexistent/javac"))
    assert "ecj" in name and command[1] == "-jar"
    classes = build.compiled(resolve(build.pins(), "Kafka Streams jars"), Path("/no/javac"))
    assert _main_class(classes).exists()
    assert "ecj" in (classes / "complete").read_text()


def test_two_first_compiles_at_once_compile_once(fresh_cache, tmp_path, monkeypatch):
    """Two runs' first use at the same time: the second waits for the first's compile,
    then takes its classes (a stand-in compiler that takes a second and counts its calls)."""
    calls = tmp_path / "calls"
    javac = tmp_path / "javac"
    javac.write_text(
        '#!/bin/sh\necho call >> "$CALLS"\nsleep 1\n'
        'while [ "$1" != "-d" ]; do shift; done\ntouch "$2/Main.class"\n'
    )
    javac.chmod(0o755)
    barrier = threading.Barrier(2)

    def compile_once(_: int) -> Path:
        barrier.wait()
        return build.compiled([], javac)

    monkeypatch.setenv("CALLS", str(calls))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first, second = pool.map(compile_once, range(2))
    assert first == second and (first / "Main.class").exists()
    assert calls.read_text().splitlines() == ["call"]
    assert [p.name for p in first.parent.iterdir() if p.is_dir()] == [first.name]
