"""Kafka for the tests: a testcontainers broker where Docker and the image can be had,
else the embedded broker.

The container runs the image the user chose (``STAGEBENCH_KAFKA_IMAGE``, default the
official ``apache/kafka``) with the single broker's settings of ``docker-compose.yml``,
read from that file, so the tests and the compose file run one broker, set up one way.
Only its port differs: a free one, not 9092, the same inside the container and outside.

testcontainers' reaper (ryuk) cannot be had where no registry answers, so nothing
removes a container behind the tests: every container started here carries
:data:`LABEL` with the session's id, is removed when its ``with`` ends, and
:func:`remove_session_containers` removes any left at the session's end.
"""

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from ground import envvars
from ground.kafka import DEFAULT_KAFKA_IMAGE
from ground.kafka.node import wait_until_reachable
from ground.kafka.ports import free_port

log = logging.getLogger(__name__)

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"
LABEL = "stagebench.test-session"
SESSION = os.urandom(6).hex()
START_TIMEOUT_S = 120.0
PULL_TIMEOUT_S = 120


def kafka_image() -> str:
    return os.environ.get(envvars.KAFKA_IMAGE) or DEFAULT_KAFKA_IMAGE


def docker_client():
    """A client of a Docker engine that answers, or None (no Docker is normal)."""
    try:
        import docker

        client = docker.from_env(timeout=PULL_TIMEOUT_S)
        client.ping()
        return client
    except Exception as err:  # DockerException, connection refused, missing socket
        log.info("no Docker engine (%s)", type(err).__name__)
        return None


def image_missing(client, image: str) -> str | None:
    """Why ``image`` cannot be had (not here, and the pull failed), or None when it is here."""
    import docker.errors

    try:
        client.images.get(image)
        return None
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(image)
        return None
    except docker.errors.DockerException as err:
        # the engine's own message names the registry it tried; the kind of failure is enough
        status = getattr(getattr(err, "response", None), "status_code", None)
        how = f"the engine answered {status}" if status else type(err).__name__
        return f"image {image} is not on this machine and cannot be pulled ({how})"


@dataclass(frozen=True)
class KafkaForTests:
    bootstrap: str
    kind: str  # "given", "container" or "embedded"


def compose_environment(port: int) -> dict[str, str]:
    """The single broker's environment in docker-compose.yml, listening and advertised on
    ``port``: the broker also connects to its own advertised address (transactions'
    partition checks), so inside the container that address must be its own listener,
    as 127.0.0.1:9092 is in the compose file."""
    service = yaml.safe_load(COMPOSE.read_text())["services"]["kafka"]
    env = {key: str(value) for key, value in service["environment"].items()}
    env["KAFKA_LISTENERS"] = env["KAFKA_LISTENERS"].replace(
        "PLAINTEXT://:9092", f"PLAINTEXT://:{port}"
    )
    env["KAFKA_ADVERTISED_LISTENERS"] = f"PLAINTEXT://127.0.0.1:{port}"
    return env


@contextlib.contextmanager
def kafka_container(image: str) -> Iterator[str]:
    """A one-node KRaft broker in a container (compose's settings); yields its bootstrap."""
    from testcontainers.core.config import testcontainers_config
    from testcontainers.core.container import DockerContainer

    if not testcontainers_config.ryuk_disabled and (
        why := image_missing(docker_client(), testcontainers_config.ryuk_image)
    ):
        # the containers here carry LABEL and are removed by this module anyway
        log.warning("testcontainers without its reaper, because %s", why)
        testcontainers_config.ryuk_disabled = True
    port = free_port()
    container = DockerContainer(image, labels={LABEL: SESSION}).with_bind_ports(port, port)
    for key, value in compose_environment(port).items():
        container.with_env(key, value)
    bootstrap = f"127.0.0.1:{port}"
    try:
        container.start()
        wait_until_reachable(bootstrap, START_TIMEOUT_S)
        yield bootstrap
    finally:
        with contextlib.suppress(Exception):  # already gone with a failed start
            container.stop()


@contextlib.contextmanager
def kafka_for_tests(home: Path, image: str | None = None) -> Iterator[KafkaForTests]:
    """The tests' Kafka: ``KAFKA_BOOTSTRAP_SERVERS`` if set, else a container of ``image``
    when Docker answers and the image can be had, else the embedded broker (logging in
    one line why Docker was not used), unless ``STAGEBENCH_TEST_DOCKER=required``: then
    RuntimeError."""
    if given := os.environ.get(envvars.TEST_BOOTSTRAP):
        yield KafkaForTests(given, "given")
        return
    image = image or kafka_image()
    client = docker_client()
    why = "no Docker engine answers" if client is None else image_missing(client, image)
    if why is not None and os.environ.get(envvars.TEST_DOCKER) == "required":
        raise RuntimeError(f"{envvars.TEST_DOCKER}=required, but {why}: no fallback to the "
                           "embedded broker")  # fmt: skip
    if why is None:
        with kafka_container(image) as bootstrap:
            log.info("Kafka for the tests: a container of %s at %s", image, bootstrap)
            yield KafkaForTests(bootstrap, "container")
        return
    log.warning("Kafka for the tests: the embedded broker, because %s", why)
    from ground.kafka.broker import EmbeddedBroker

    with EmbeddedBroker(home=home) as state:
        yield KafkaForTests(state.bootstrap, "embedded")


def remove_session_containers() -> list[str]:
    """Remove every container this test session started that is still there; their names."""
    client = docker_client()
    if client is None:
        return []
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}={SESSION}"}):
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
            removed.append(container.name)
    return removed
