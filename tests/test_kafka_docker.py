"""The tests' Kafka: a container of the chosen image where Docker has it, else the
embedded broker, with one line that says why; and no container left behind."""

import logging

import pytest

from ground.kafka.local import local_broker
from ground.kafka.topics import check_topics, create_topics
from tests.kafka_docker import LABEL, SESSION, kafka_container, kafka_for_tests

pytestmark = [pytest.mark.docker, pytest.mark.integration]


def test_a_missing_image_falls_back_to_the_embedded_broker(
    docker_engine, tmp_path, caplog, monkeypatch, unique
):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("STAGEBENCH_TEST_DOCKER", raising=False)
    image = f"stagebench/no-such-kafka:{unique}"
    with caplog.at_level(logging.WARNING), kafka_for_tests(tmp_path, image) as kafka:
        assert kafka.kind == "embedded"
        broker = local_broker(kafka.bootstrap)
        assert broker is not None and broker.kind == "embedded"
        create_topics(kafka.bootstrap, [f"fallback-{unique}"])
    [line] = [r.getMessage() for r in caplog.records if "Kafka for the tests" in r.message]
    assert line.startswith("Kafka for the tests: the embedded broker, because image ")
    assert image in line and "cannot be pulled" in line


def test_asked_for_docker_the_tests_never_fall_back(docker_engine, tmp_path, monkeypatch, unique):
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("STAGEBENCH_TEST_DOCKER", "required")
    image = f"stagebench/no-such-kafka:{unique}"
    required = pytest.raises(RuntimeError, match="STAGEBENCH_TEST_DOCKER=required, but image ")
    with required, kafka_for_tests(tmp_path, image):
        pass


def test_a_container_broker_is_the_image_with_composes_settings(
    docker_engine, docker_kafka_image, unique
):
    session = {"label": f"{LABEL}={SESSION}"}  # the session's own broker may be one of them
    before = {c.id for c in docker_engine.containers.list(all=True, filters=session)}
    with kafka_container(docker_kafka_image) as bootstrap:
        [started] = [
            c for c in docker_engine.containers.list(all=True, filters=session)
            if c.id not in before
        ]  # fmt: skip
        topic = f"container-{unique}"
        create_topics(bootstrap, [topic], partitions=2)
        report = check_topics(bootstrap, [topic])
        assert report.timestamp_types[topic] == "LogAppendTime"
        # the run samples the container's processes as the broker
        broker = local_broker(bootstrap)
        assert broker is not None and broker.kind == "container", broker
        assert broker.images == (docker_kafka_image,)
    # removed on leaving, not only stopped
    left = {c.id for c in docker_engine.containers.list(all=True, filters=session)}
    assert started.id not in left and left == before
