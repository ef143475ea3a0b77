"""Which processes on this machine are the broker: the embedded JVM, a container, or none."""

import os

from ground.jvm.heap import container_perf_file
from ground.kafka import local
from ground.kafka.local import LocalBroker, local_broker
from ground.kafka.ports import free_port


def test_a_broker_elsewhere_or_half_here_has_no_local_processes(monkeypatch):
    assert local_broker("kafka.example:9092") is None
    monkeypatch.setattr(local, "listener_pid", lambda port: None)
    monkeypatch.setattr(local, "published_by", lambda port: None)
    assert local_broker(f"127.0.0.1:{free_port()}") is None


def test_a_container_publishing_the_port_is_the_broker_with_its_port_forwarder(monkeypatch):
    proxy, jvm = 4001, 4002
    monkeypatch.setattr(local, "listener_pid", lambda port: proxy)
    monkeypatch.setattr(local, "_cmdline", lambda pid: ["/usr/sbin/docker-proxy"])
    monkeypatch.setattr(
        local, "published_by", lambda port: local.Container(f"kafka-{port}", "img:1", jvm + port)
    )
    broker = local_broker("127.0.0.1:1,localhost:2")
    assert broker == LocalBroker(
        "container", (jvm + 1, jvm + 2, proxy, proxy), ("kafka-1", "kafka-2"), ("img:1",)
    )
    assert broker.describe() == {
        "kind": "container", "containers": ["kafka-1", "kafka-2"], "images": ["img:1"]
    }  # fmt: skip


def test_a_kafka_jvm_listening_here_is_the_embedded_broker(monkeypatch):
    monkeypatch.setattr(local, "listener_pid", lambda port: 77)
    monkeypatch.setattr(local, "_cmdline", lambda pid: ["java", "-cp", "x", "kafka.Kafka", "p"])
    assert local_broker("127.0.0.1:9092") == LocalBroker("embedded", (77,))


def test_without_docker_no_container_is_found(monkeypatch):
    monkeypatch.setattr(local.shutil, "which", lambda name: None)
    assert local.published_by(9092) is None


def test_a_process_in_this_namespace_has_no_container_counter_file():
    assert container_perf_file(os.getpid()) is None
    assert container_perf_file(2**22 + 1) is None  # above Linux's highest pid: none such
