"""The Java job compiled at first use into the user's cache: once, with the JDK's javac or,
on a runtime without one, with the Eclipse compiler (pinned jars: marked integration, as
they come from Maven Central the first time)."""

import subprocess
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
