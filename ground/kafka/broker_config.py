"""The embedded broker's configuration files: a KRaft node's server.properties, its
log4j2 configuration, and a fresh cluster id (:mod:`ground.kafka.broker` writes them
into each node's home before formatting its storage)."""

import base64
import uuid
from pathlib import Path

from ground.kafka.ports import LOOPBACK

RETENTION_HOURS = 168


def server_properties(
    node_id: int, port: int, controller_port: int, data_dir: Path, voters: dict[int, int]
) -> str:
    """KRaft combined-mode configuration, as the official defaults.

    ``voters`` maps every node id to its controller port. One node bootstraps a
    dynamic quorum of itself (formatted ``--standalone``); several nodes form a
    static quorum of all of them. Internal topics are replicated up to three
    times and need one in-sync replica, so a cluster keeps working with a node down.
    """
    replicas = min(len(voters), 3)
    quorum = (
        {"controller.quorum.bootstrap.servers": f"{LOOPBACK}:{controller_port}"}
        if len(voters) == 1
        else {
            "controller.quorum.voters": ",".join(f"{n}@{LOOPBACK}:{p}" for n, p in voters.items())
        }
    )
    props = {
        "process.roles": "broker,controller",
        "node.id": node_id,
        **quorum,
        "listeners": f"PLAINTEXT://{LOOPBACK}:{port},CONTROLLER://{LOOPBACK}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": 1,
        "offsets.topic.replication.factor": replicas,
        "transaction.state.log.replication.factor": replicas,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": replicas,
        "share.coordinator.state.topic.min.isr": 1,
        "log.message.timestamp.type": "LogAppendTime",
        # benchmarks create and consume fresh topics at once: no rebalance delay
        "group.initial.rebalance.delay.ms": 0,
        "auto.create.topics.enable": "false",
        # a run's records stay a week, for `stagebench evaluate` to read again; its topics
        # stay until `stagebench topics prune` deletes them (docs/kafka.md#disk)
        "log.retention.hours": RETENTION_HOURS,
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def log4j2_properties(log_file: Path) -> str:
    return "\n".join(
        [
            "status = warn",
            "appender.file.type = File",
            "appender.file.name = file",
            f"appender.file.fileName = {log_file}",
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.file.ref = file",
            "logger.kafka.name = org.apache.kafka",
            "logger.kafka.level = info",
            "",
        ]
    )


def cluster_id() -> str:
    """A KRaft cluster id: a random UUID, base64url without padding, not starting with
    "-" (the storage tool would read it as an option; Kafka's own ids avoid it too)."""
    while (found := base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode())[0] == "-":
        pass
    return found
