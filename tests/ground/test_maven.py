"""Pinned jars from a Maven repository: a file:// one here, no network, no JVM."""

import concurrent.futures
import hashlib
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ground import envvars
from ground.errors import ResolveError
from ground.jvm import maven
from ground.jvm.maven import Pin
from ground.kafka import KAFKA_VERSION
from ground.kafka.node import BROKER_JARS


def _publish(repo: Path, coordinate: str, content: bytes) -> Pin:
    """Put a jar into a Maven repository layout; its pin."""
    pin = Pin.parse(f"{coordinate} {hashlib.sha1(content).hexdigest()}")
    jar = repo / pin.url("").lstrip("/")
    jar.parent.mkdir(parents=True, exist_ok=True)
    jar.write_bytes(content)
    return pin


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(envvars.CACHE_DIR, str(tmp_path / "cache"))
    return tmp_path / "repo"


def _files(cache: Path) -> list[str]:
    """The files in the cache but the install locks beside its entries."""
    return sorted(p.name for p in cache.rglob("*") if p.is_file() and p.suffix != ".lock")


def test_downloads_once_checked_then_serves_the_cache(repo, tmp_path, capsys):
    pins = [
        _publish(repo, "org.example:a:1.0", b"a" * 100_000),
        _publish(repo, "com.b:b_2.13:2", b"b"),
    ]
    jars = maven.resolve(pins, "the test's jars", repo.as_uri())
    assert [jar.name for jar in jars] == ["a-1.0.jar", "b_2.13-2.jar"]
    assert jars[0].read_bytes() == b"a" * 100_000
    assert "Downloading the test's jars" in capsys.readouterr().err
    assert _files(tmp_path / "cache") == ["a-1.0.jar", "b_2.13-2.jar", "complete"]
    # a second call needs no repository and says nothing
    assert maven.resolve(pins, "the test's jars", (tmp_path / "gone").as_uri()) == jars
    assert capsys.readouterr().err == ""
    assert maven.classpath(jars).split(":") == [str(jar) for jar in jars]


def test_an_interrupted_first_time_downloads_only_what_is_missing(repo, capsys):
    pins = [_publish(repo, "g:a:1", b"a"), _publish(repo, "g:b:1", b"b")]
    first = maven.resolve(pins, repository=repo.as_uri())
    (first[0].parent / "complete").unlink()
    first[1].unlink()
    (repo / pins[0].url("").lstrip("/")).unlink()  # a download of it would fail
    capsys.readouterr()
    assert maven.resolve(pins, repository=repo.as_uri()) == first
    assert ": 1 jar (first time only" in capsys.readouterr().err


def test_a_jar_that_is_not_the_pinned_one_is_refused_and_not_kept(repo, tmp_path):
    good = _publish(repo, "org.example:a:1.0", b"the pinned jar")
    (repo / good.url("").lstrip("/")).write_bytes(b"another jar")
    url = good.url(repo.as_uri())
    with pytest.raises(ResolveError, match=r"org.example:a:1.0 from .*a-1.0.jar has SHA-1") as err:
        maven.resolve([good], repository=repo.as_uri())
    assert url in str(err.value) and good.sha1 in str(err.value)
    assert _files(tmp_path / "cache") == []  # no jar, no partial download, no marker


def test_a_jar_the_repository_lacks_is_a_clear_error(repo):
    pin = Pin.parse(f"org.example:missing:1 {'0' * 40}")
    with pytest.raises(ResolveError, match=r"could not download org.example:missing:1 from "):
        maven.resolve([pin], repository=repo.as_uri())


@pytest.mark.parametrize(
    "failure",
    [urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")), TimeoutError()],
)
def test_an_unreachable_repository_is_a_clear_error(repo, monkeypatch, failure):
    def fail(url, timeout):
        raise failure

    monkeypatch.setattr(urllib.request, "urlopen", fail)
    pin = Pin.parse(f"org.example:a:1 {'0' * 40}")
    with pytest.raises(ResolveError, match=r"reachable, directly or through https_proxy") as err:
        maven.resolve([pin])
    assert f"org.example:a:1 from {pin.url(maven.default_repository())}" in str(err.value)


@pytest.mark.parametrize(
    "line", ["g:a:1", "g:a 0123", "g::1 " + "0" * 40, "g:a:1:x " + "0" * 40, "g:a:1 " + "X" * 40]
)
def test_a_malformed_pin_is_refused(line):
    with pytest.raises(ResolveError, match="bad pin"):
        Pin.parse(line)


def test_a_pin_names_its_jar_in_maven_centrals_or_the_users_repository(monkeypatch, tmp_path):
    pin = Pin.parse(f"org.apache.kafka:kafka_2.13:4.3.1 {'0' * 40}")
    path = "org/apache/kafka/kafka_2.13/4.3.1/kafka_2.13-4.3.1.jar"
    monkeypatch.delenv(envvars.MAVEN_REPOSITORY, raising=False)
    assert pin.url(maven.default_repository()) == f"{maven.CENTRAL}/{path}"
    mirror = tmp_path.as_uri()  # a repository of the user's, here a directory
    monkeypatch.setenv(envvars.MAVEN_REPOSITORY, mirror + "/")
    assert pin.url(maven.default_repository()) == f"{mirror}/{path}"


def test_the_broker_jars_are_kafka_at_its_version_with_the_log4j2_binding():
    coordinates = {pin.coordinate for pin in BROKER_JARS}
    assert f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}" in coordinates
    assert f"org.apache.kafka:kafka-clients:{KAFKA_VERSION}" in coordinates
    assert any(c.startswith("org.apache.logging.log4j:log4j-slf4j-impl:") for c in coordinates)
    artifacts = [(pin.group, pin.artifact) for pin in BROKER_JARS]
    assert len(set(artifacts)) == len(artifacts) == 46  # one version of each


def test_two_first_resolutions_at_once_download_once(repo, capsys):
    """Two runs' first resolution of one list at the same time: the second waits for the
    first's download, then takes its jars."""
    pins = [_publish(repo, "org.example:big:1", os.urandom(5_000_000))]
    barrier = threading.Barrier(2)

    def resolve() -> list[Path]:
        barrier.wait()
        return maven.resolve(pins, "the test's jars", repo.as_uri())

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: resolve(), range(2))
    assert first == second and first[0].read_bytes() == (repo / pins[0].url("")[1:]).read_bytes()
    assert capsys.readouterr().err.count("Downloading the test's jars") == 1
