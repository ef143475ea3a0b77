"""docker-compose.yml: the single broker by default, three brokers under the profile "cluster".

The file's structure, without Docker: what ``docker compose up`` starts, the image,
KRaft settings, ports and health checks. ``tests/test_compose_docker.py`` runs it.
"""

import base64
import re
from pathlib import Path

import pytest
import yaml

from ground import envvars
from ground.kafka import DEFAULT_KAFKA_IMAGE

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"
SINGLE = "kafka"
CLUSTER = ("kafka-1", "kafka-2", "kafka-3")
PROFILE = "cluster"


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def env(service: dict) -> dict[str, str]:
    return {k: str(v) for k, v in service["environment"].items()}


def listeners(service: dict, key: str = "KAFKA_LISTENERS") -> dict[str, tuple[str, int]]:
    """name -> (host, port) of a listener list such as ``INTERNAL://kafka-1:9092,…``."""
    found = {}
    for item in env(service)[key].split(","):
        name, _, address = item.partition("://")
        host, _, port = address.rpartition(":")
        found[name] = (host, int(port))
    return found


def published(service: dict) -> list[tuple[str, int, int]]:
    """(host address, host port, container port) of each published port."""
    result = []
    for spec in service.get("ports", []):
        address, host_port, container_port = spec.split(":")
        result.append((address, int(host_port), int(container_port)))
    return result


def test_the_services_and_the_profile_that_selects_the_cluster(services):
    assert set(services) == {SINGLE, *CLUSTER}
    # `docker compose up` starts the services without a profile: the single broker alone
    assert [name for name, s in services.items() if not s.get("profiles")] == [SINGLE]
    assert all(services[name]["profiles"] == [PROFILE] for name in CLUSTER)


def test_every_node_is_the_image_the_user_chose_else_the_official_one(services):
    for name, service in services.items():
        assert service["image"] == f"${{{envvars.KAFKA_IMAGE}:-{DEFAULT_KAFKA_IMAGE}}}", name


def test_every_node_stamps_log_append_time_and_creates_no_topics_itself(services):
    for name, service in services.items():
        assert env(service)["KAFKA_LOG_MESSAGE_TIMESTAMP_TYPE"] == "LogAppendTime", name
        assert env(service)["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false", name
        assert env(service)["KAFKA_HEAP_OPTS"] == "-Xms1G -Xmx1G", name  # KAFKA-19890


def test_every_node_is_kraft_broker_and_controller(services):
    for name, service in services.items():
        e = env(service)
        assert e["KAFKA_PROCESS_ROLES"] == "broker,controller", name
        assert "ZOOKEEPER" not in " ".join(e).upper(), name
        names = set(listeners(service))
        protocols = dict(p.split(":") for p in e["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
        assert names <= set(protocols), name
        assert e["KAFKA_CONTROLLER_LISTENER_NAMES"] in names, name
        advertised = set(listeners(service, "KAFKA_ADVERTISED_LISTENERS"))
        assert advertised <= names and e["KAFKA_CONTROLLER_LISTENER_NAMES"] not in advertised


def test_node_ids_hosts_and_containers_are_unique_in_the_cluster(services):
    nodes = [services[name] for name in CLUSTER]
    ids = [int(env(s)["KAFKA_NODE_ID"]) for s in nodes]
    assert sorted(ids) == [1, 2, 3]
    assert [s["hostname"] for s in nodes] == list(CLUSTER)
    containers = [s["container_name"] for s in services.values()]
    assert len(set(containers)) == len(containers)


def test_the_quorum_voters_name_every_controller(services):
    nodes = {name: services[name] for name in CLUSTER}
    voters = {env(s)["KAFKA_CONTROLLER_QUORUM_VOTERS"] for s in nodes.values()}
    assert len(voters) == 1, "every node must have the same voter list"
    named = set()
    for voter in voters.pop().split(","):
        node_id, _, address = voter.partition("@")
        host, _, port = address.rpartition(":")
        named.add((int(node_id), host, int(port)))
    controllers = {
        (int(env(s)["KAFKA_NODE_ID"]), s["hostname"], listeners(s)["CONTROLLER"][1])
        for s in nodes.values()
        if "controller" in env(s)["KAFKA_PROCESS_ROLES"].split(",")
    }
    assert named == controllers and len(named) == 3
    # one cluster: one id, a base64 UUID (22 characters, 16 bytes) as kafka-storage expects
    ids = {env(s)["CLUSTER_ID"] for s in nodes.values()}
    assert len(ids) == 1
    cluster_id = ids.pop()
    assert len(cluster_id) == 22 and len(base64.urlsafe_b64decode(cluster_id + "==")) == 16
    # the single broker is a quorum of itself
    single = services[SINGLE]
    own = f"{env(single)['KAFKA_NODE_ID']}@localhost:{listeners(single)['CONTROLLER'][1]}"
    assert env(single)["KAFKA_CONTROLLER_QUORUM_VOTERS"] == own


def test_the_cluster_replicates_its_internal_topics_within_its_size(services):
    for name in CLUSTER:
        e = env(services[name])
        assert e["KAFKA_INTER_BROKER_LISTENER_NAME"] in listeners(services[name])
        for topic in ("OFFSETS_TOPIC", "TRANSACTION_STATE_LOG", "SHARE_COORDINATOR_STATE_TOPIC"):
            assert int(e[f"KAFKA_{topic}_REPLICATION_FACTOR"]) == len(CLUSTER), (name, topic)
        for topic in ("TRANSACTION_STATE_LOG", "SHARE_COORDINATOR_STATE_TOPIC"):
            assert 1 <= int(e[f"KAFKA_{topic}_MIN_ISR"]) < len(CLUSTER), (name, topic)
        # stagebench's topics have one replica until it sets its own min.insync.replicas
        assert "KAFKA_MIN_INSYNC_REPLICAS" not in e


def test_ports_are_unique_on_loopback_and_advertised_as_published(services):
    host_ports = []
    for name, service in services.items():
        ports = published(service)
        assert len(ports) == 1, name
        address, host_port, container_port = ports[0]
        assert address == "127.0.0.1", name
        host_ports.append(host_port)
        # the listener the host reaches is advertised at the published address
        advertised = listeners(service, "KAFKA_ADVERTISED_LISTENERS")
        outside = [n for n, (host, _) in advertised.items() if host == "127.0.0.1"]
        assert len(outside) == 1, name
        assert advertised[outside[0]] == ("127.0.0.1", host_port), name
        assert listeners(service)[outside[0]][1] == container_port, name
    assert len(set(host_ports)) == len(host_ports)
    for name in CLUSTER:  # inside the network each node advertises its own hostname
        advertised = listeners(services[name], "KAFKA_ADVERTISED_LISTENERS")
        inter_broker = env(services[name])["KAFKA_INTER_BROKER_LISTENER_NAME"]
        assert advertised[inter_broker][0] == services[name]["hostname"]


def test_every_node_has_a_health_check_that_asks_its_own_listener_without_a_jvm(services):
    for name, service in services.items():
        check = service["healthcheck"]
        command = check["test"]
        assert command[:3] == ["CMD", "bash", "-c"], name
        # a Kafka request over bash's /dev/tcp: no tool that starts a JVM
        assert ".sh" not in command[3] and "java" not in command[3], name
        [port] = re.findall(r"/dev/tcp/127\.0\.0\.1/(\d+)", command[3])
        assert int(port) in {p for _, p in listeners(service).values()}, name
        seconds = int(check["interval"].removesuffix("s")) * check["retries"]
        assert seconds + int(check["start_period"].removesuffix("s")) >= 60, name
