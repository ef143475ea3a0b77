"""Shared fixtures: a real Kafka 4 broker, unique names, one SparkSession.

Kafka, in order: ``KAFKA_BOOTSTRAP_SERVERS`` if set, else a
testcontainers Kafka (KRaft, LogAppendTime) when a Docker engine answers,
else the embedded broker in a temporary home (stopped after the session).
"""

import logging
import os
import uuid
from collections.abc import Iterator

import pytest

from ground import envvars

log = logging.getLogger(__name__)

# Confluent Platform 8.x is Apache Kafka 4.x; the testcontainers module speaks its image layout.
CONTAINER_IMAGE = "confluentinc/cp-kafka:8.1.0"


def docker_available() -> bool:
    """True when a Docker engine answers; never raises (no Docker is normal here)."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        client.ping()
        return True
    except Exception as err:  # DockerException, connection refused, missing socket
        log.info("no Docker engine (%s): using the embedded broker", type(err).__name__)
        return False


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> Iterator[str]:
    if given := os.environ.get(envvars.TEST_BOOTSTRAP):
        yield given
        return
    if docker_available():
        from testcontainers.community.kafka import KafkaContainer

        container = (
            KafkaContainer(CONTAINER_IMAGE)
            .with_kraft()
            .with_env("KAFKA_LOG_MESSAGE_TIMESTAMP_TYPE", "LogAppendTime")
        )
        with container:
            yield container.get_bootstrap_server()
        return
    from ground.kafka.broker import EmbeddedBroker

    with EmbeddedBroker(home=tmp_path_factory.mktemp("broker")) as state:
        yield state.bootstrap


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory):
    """An embedded three-broker KRaft cluster (ids 1–3), for the same-leader rule on
    more than one broker: the :class:`~ground.kafka.broker.EmbeddedBroker` that runs
    it, so a test can stop and start one node."""
    from ground.kafka.broker import EmbeddedBroker

    broker = EmbeddedBroker(home=tmp_path_factory.mktemp("cluster"), brokers=3)
    with broker:
        yield broker


@pytest.fixture
def unique() -> str:
    """A short unique string for topic names and run ids."""
    return uuid.uuid4().hex[:10]


@pytest.fixture(scope="session")
def spark():
    from ground.jvm.spark import build_session

    session = build_session(
        "stagebench-tests",
        master="local[2]",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        },
    )
    yield session
    session.stop()
