"""The one-clock rule on a real three-broker cluster: leaders pinned, mixed leaders
refused, a leader that moves when its broker stops."""

import subprocess
import sys
import time

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from ground.kafka.topics import (
    LOG_APPEND_TIME,
    TIMESTAMP_TYPE,
    check_topics,
    create_topics,
    current_leaders,
)

pytestmark = pytest.mark.integration


def _replicas(bootstrap: str, name: str) -> list[list[int]]:
    topic = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics[name]
    return [topic.partitions[p].replicas for p in sorted(topic.partitions)]


def test_topics_are_replicated_and_led_by_the_chosen_broker(kafka_cluster, unique):
    bootstrap = kafka_cluster.status().bootstrap
    names = [f"pinned-{unique}-{i}" for i in range(2)]
    assert create_topics(bootstrap, names, partitions=3, leader=2) == 2
    report = check_topics(bootstrap, names, leader=2)
    assert report.leaders == {n: [2, 2, 2] for n in names}
    assert report.timestamp_types == dict.fromkeys(names, LOG_APPEND_TIME)
    for name in names:
        assert all(len(r) == 3 and r[0] == 2 for r in _replicas(bootstrap, name))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, names[0])
    config = admin.describe_configs([resource])[resource].result(10)
    assert config["min.insync.replicas"].value == "2"


def test_topics_check_refuses_partitions_with_different_leaders(kafka_cluster, unique):
    bootstrap = kafka_cluster.status().bootstrap
    name = f"mixed-{unique}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # made that way on purpose: partition 0 led by broker 1, partition 1 by broker 2
    topic = NewTopic(name, num_partitions=2, replica_assignment=[[1, 2, 3], [2, 3, 1]],
                     config={TIMESTAMP_TYPE: LOG_APPEND_TIME})  # fmt: skip
    admin.create_topics([topic])[name].result(30)
    deadline = time.monotonic() + 30
    while min(current_leaders(admin, [name]).get(name, [-1])) < 0 and time.monotonic() < deadline:
        time.sleep(0.3)
    result = subprocess.run(
        [sys.executable, "-m", "stagebench", "topics", "check", name, "--bootstrap", bootstrap],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout
    assert result.stderr.strip().splitlines() == [
        f"ERROR: refusing to measure: partitions are led by brokers [1, 2]; every partition "
        f"must have the same leader so all timestamps come from one clock ({name}: [1, 2])"
    ]


def test_a_stopped_leader_hands_its_partitions_over(kafka_cluster, unique):
    bootstrap = kafka_cluster.status().bootstrap
    name = f"moving-{unique}"
    create_topics(bootstrap, [name], partitions=2, leader=3)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    kafka_cluster.stop_node(3)
    try:
        assert not kafka_cluster.status().node(3).running
        deadline = time.monotonic() + 60
        while 3 in (leaders := current_leaders(admin, [name])[name]):
            assert time.monotonic() < deadline, leaders
            time.sleep(0.5)
        assert all(leader in (1, 2) for leader in leaders), leaders
    finally:
        kafka_cluster.start_node(3)
    assert kafka_cluster.status().node(3).running
    assert sorted(admin.list_topics(timeout=10).brokers) == [1, 2, 3]
