"""Pure parts of the foundation: no Kafka, no Spark."""

from dataclasses import dataclass, field
from typing import Literal

import pytest

from ground import contract as schema
from ground.config import from_mapping
from ground.errors import ConfigError, JavaError, TopicError
from ground.jvm.java import parse_java_version
from ground.kafka.broker_config import cluster_id, server_properties
from ground.kafka.naming import RunTopics
from ground.kafka.topics import replica_assignment
from ground.malformed import validate_input


@pytest.mark.parametrize(
    ("text", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_392"', 8),
    ],
)
def test_parse_java_version(text, major):
    assert parse_java_version(text) == major


def test_parse_java_version_rejects_garbage():
    with pytest.raises(JavaError):
        parse_java_version("command not found")


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_server_properties_use_log_append_time_on_loopback(tmp_path):
    props = _props(server_properties(1, 9092, 9093, tmp_path, {1: 9093}))
    assert props["log.message.timestamp.type"] == "LogAppendTime"
    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert props["log.dirs"] == str(tmp_path)
    # one node bootstraps a quorum of itself (formatted --standalone)
    assert props["controller.quorum.bootstrap.servers"] == "127.0.0.1:9093"
    assert "controller.quorum.voters" not in props
    assert props["offsets.topic.replication.factor"] == "1"


def test_cluster_nodes_share_one_static_quorum(tmp_path):
    voters = {1: 9101, 2: 9102, 3: 9103}
    nodes = [_props(server_properties(n, 9090 + n, voters[n], tmp_path / str(n), voters))
             for n in voters]  # fmt: skip
    quorum = "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103"
    assert {p["controller.quorum.voters"] for p in nodes} == {quorum}
    assert [p["node.id"] for p in nodes] == ["1", "2", "3"]
    assert len({p["listeners"] for p in nodes}) == 3  # own ports
    assert len({p["log.dirs"] for p in nodes}) == 3  # own data
    # internal topics survive a node down: three replicas, one must be in sync
    assert {p["offsets.topic.replication.factor"] for p in nodes} == {"3"}
    assert {p["transaction.state.log.min.isr"] for p in nodes} == {"1"}


def test_cluster_id_is_base64_uuid():
    ids = {cluster_id() for _ in range(20)}
    assert len(ids) == 20
    assert all(len(i) == 22 and "=" not in i for i in ids)
    assert not any(cluster_id().startswith("-") for _ in range(2000))  # 1 in 64 would


def test_replica_assignment_puts_the_leader_first():
    assert replica_assignment([1, 2, 3], 2, 4, 2) == [[2, 1], [2, 3], [2, 1], [2, 3]]
    assert replica_assignment([1], 1, 3, 1) == [[1], [1], [1]]


def test_replica_assignment_rejects_unknown_leader_and_replication():
    with pytest.raises(TopicError, match="not in the cluster"):
        replica_assignment([1, 2], 5, 1, 1)
    with pytest.raises(TopicError, match="replication"):
        replica_assignment([1, 2], 1, 1, 3)


def test_run_topics_are_distinct_per_run():
    a, b = RunTopics.for_run("a1"), RunTopics.for_run("b2")
    assert len(set(a.all)) == 3
    assert not set(a.all) & set(b.all)


def test_from_mapping_rejects_unknown_keys():
    @dataclass(frozen=True)
    class Conf:
        rate: int = 1

    assert from_mapping(Conf, {"rate": 5}, "x").rate == 5
    with pytest.raises(ConfigError, match=r"unknown key.*rat"):
        from_mapping(Conf, {"rat": 5}, "x")


@dataclass(frozen=True)
class _Typed:
    rate: float = 1.0
    count: int = 1
    name: str = "a"
    mode: Literal["on", "off"] = "on"
    warmup: float | str = "auto"
    limit: float | None = None
    rates: tuple[float, ...] = ()
    table: dict[str, str] = field(default_factory=dict)
    flag: bool = False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rate": "fast"}, r"\[run\] rate: expected a number, got 'fast'"),
        ({"rate": True}, r"rate: expected a number, got True"),
        ({"count": 1.5}, r"count: expected a whole number, got 1.5"),
        ({"name": 3}, r"name: expected a string, got 3"),
        ({"mode": "auto"}, r"mode: expected one of 'on', 'off', got 'auto'"),
        ({"limit": "x"}, r"limit: expected a number or unset, got 'x'"),
        ({"rates": [1, "a"]}, r"rates: expected a list of a number, got \[1, 'a'\]"),
        ({"table": "a=b"}, r"table: expected a table, got 'a=b'"),
        ({"flag": 1}, r"flag: expected true or false, got 1"),
    ],
)
def test_from_mapping_names_the_key_and_the_type_of_a_bad_value(values, message):
    with pytest.raises(ConfigError, match=message):
        from_mapping(_Typed, values, "run")


def test_from_mapping_takes_what_toml_and_json_give():
    given = {"rate": 5, "count": 2, "warmup": 30, "limit": None, "rates": [1, 2.5],
             "table": {"k": "v"}, "flag": True, "mode": "off"}  # fmt: skip
    assert from_mapping(_Typed, given, "run").rates == [1, 2.5]


def test_from_mapping_names_the_table_of_a_refused_value():
    @dataclass(frozen=True)
    class Checked:
        delay_ms: int = 0

        def __post_init__(self):
            if self.delay_ms < 0:
                raise ConfigError("delay_ms must be >= 0")

    with pytest.raises(ConfigError, match=r"^\[pipeline\] delay_ms must be >= 0$"):
        from_mapping(Checked, {"delay_ms": -5}, "pipeline")


def test_validate_input_accepts_a_good_message_and_names_problems():
    good = {
        schema.LOCATION_ID: "RWS01_MONIBAS_0021hrl0414ra",
        schema.LANE: 1,
        schema.OBSERVATION_TS: 1_700_000_000_000,
        schema.SPEED: 97.5,
        schema.LATITUDE: 52.1,
        schema.LONGITUDE: 5.1,
        schema.NUM_LANES: 3,
        schema.ACCURACY: 95.0,
        schema.SEQ: 0,
        schema.SCHEDULED_TS: 1_700_000_000_010,
    }
    assert validate_input(good) == []
    both = {**good, schema.FLOW: 12.0}
    assert validate_input(both)
    assert any(schema.LANE in p for p in validate_input({**good, schema.LANE: "1"}))
