"""A secured cluster's client properties: read as Kafka's tools read them, translated for
stagebench's own clients, refused by name where they cannot be, and taken by every
client of a run against a broker that demands SASL."""

import json
import os
import subprocess
import sys

import pytest

from ground.errors import ConfigError
from ground.kafka import broker as broker_module
from ground.kafka import client
from ground.kafka.broker import EmbeddedBroker
from ground.kafka.broker_config import server_properties
from ground.kafka.ports import LOOPBACK, free_port

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" '
    'password="b\\"s";'
)
PROPERTIES = f"""# the cluster's
security.protocol=SASL_PLAINTEXT
sasl.mechanism : PLAIN
sasl.jaas.config={JAAS[:40]}\\
    {JAAS[40:]}
"""


def test_a_properties_file_reads_as_javas_properties():
    assert client.parse(PROPERTIES, "f") == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": JAAS,
    }
    with pytest.raises(ConfigError, match=r"f line 1: expected key=value, got 'oops'"):
        client.parse("oops", "f")


def test_stagebench_s_own_clients_take_the_credentials_and_a_pem_trust_store():
    java = client.parse(PROPERTIES, "f") | {
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/etc/ca.pem",
    }
    assert client.librdkafka(java) == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "bench",
        "sasl.password": 'b\\"s',
        "ssl.ca.location": "/etc/ca.pem",
    }


SECRET_KEYS = (
    "sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.keystore.key",
    "ssl.keystore.location", "ssl.truststore.password", "SSL.KEY.PASSWORD",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.assertion.private.key.passphrase", "basic.auth.user.info",
    # under the prefixes an engine adds: Kafka Streams' clients, Flink's table options
    "producer.sasl.jaas.config", "main.consumer.ssl.key.password", "properties.sasl.jaas.config",
)  # fmt: skip
PLAIN_KEYS = (
    "security.protocol", "sasl.mechanism", "ssl.truststore.location", "ssl.truststore.type",
    "ssl.endpoint.identification.algorithm", "bootstrap.servers", "properties.group.id",
    "key.format", "sasl.kerberos.service.name",
)  # fmt: skip


def test_every_value_that_can_carry_a_secret_is_redacted_and_its_key_kept():
    given = {key: f"value of {key}" for key in SECRET_KEYS + PLAIN_KEYS}
    shown = client.redacted(given)
    assert list(shown) == list(given)
    assert [k for k in shown if shown[k] == client.REDACTED] == list(SECRET_KEYS)
    assert all(shown[k] == given[k] for k in PLAIN_KEYS)
    assert given["sasl.jaas.config"] == "value of sasl.jaas.config"  # the input is left alone


@pytest.mark.parametrize(
    ("java", "message"),
    [
        ({"ssl.keystore.location": "k.jks"}, "cannot take ssl.keystore.location"),
        ({"ssl.truststore.location": "t.jks"}, "a PEM file only; set ssl.truststore.type=PEM"),
        ({"sasl.jaas.config": "com.example.Login required;"}, "PlainLoginModule or"),
    ],
)
def test_what_they_cannot_take_is_refused_by_name(java, message):
    with pytest.raises(ConfigError, match=message):
        client.librdkafka(java)


def test_a_bad_properties_file_is_one_line_before_anything_starts(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("security.protocol=SSL\nssl.keystore.location=k.jks\n")
    env = {**os.environ, "STAGEBENCH_KAFKA_PROPERTIES": str(path)}
    for given in (path, tmp_path / "missing"):
        env["STAGEBENCH_KAFKA_PROPERTIES"] = str(given)
        result = subprocess.run(
            [sys.executable, "-m", "stagebench", "topics", "check", "x"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("ERROR: STAGEBENCH_KAFKA_PROPERTIES: ")
        assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_every_client_of_a_run_takes_the_sasl_settings(tmp_path, monkeypatch):
    sasl_port = free_port()
    users = 'username="admin" password="admin-secret" user_admin="admin-secret" '
    users += 'user_bench="bench-secret"'

    def with_sasl(node_id, port, controller_port, data_dir, voters):
        # a second listener that demands SASL/PLAIN; the broker's own stays open to the
        # bench's start-up check
        extra = {
            "listeners": f"PLAINTEXT://{LOOPBACK}:{port},CONTROLLER://{LOOPBACK}:"
            f"{controller_port},SASL://{LOOPBACK}:{sasl_port}",
            "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port},SASL://{LOOPBACK}:{sasl_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
            "SASL:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl.plain.sasl.jaas.config": "org.apache.kafka.common.security."
            f"plain.PlainLoginModule required {users};",
        }
        text = server_properties(node_id, port, controller_port, data_dir, voters)
        return text + "".join(f"{k}={v}\n" for k, v in extra.items())

    monkeypatch.setattr(broker_module, "server_properties", with_sasl)
    properties = tmp_path / "client.properties"
    properties.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" '
        'password="bench-secret";\n'
    )
    env = {**os.environ, "STAGEBENCH_KAFKA_PROPERTIES": str(properties)}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    with EmbeddedBroker(home=tmp_path / "broker"):
        result = subprocess.run(
            [sys.executable, "-m", "stagebench", "run", "--stage", "floor", "--rate", "200",
             "--duration", "5", "--warmup", "2", "--tail", "1",
             "--bootstrap", f"{LOOPBACK}:{sasl_port}", "--results", str(tmp_path / "results")],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(next((tmp_path / "results").glob("*-floor-*/summary.json")).read_text())
    assert summary["trusted"] is True and summary["records"]["missing"] == 0
    assert summary["records"]["outputs"] > 0
    assert summary["metadata"]["kafka_client"] == [
        "sasl.jaas.config", "sasl.mechanism", "security.protocol"
    ]  # fmt: skip
