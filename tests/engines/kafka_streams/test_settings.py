"""``[engine.kafka-streams]``: its defaults made for latency, what it refuses, and the
properties and JVM configuration a job gets (no Kafka, no JVM)."""

import json
import subprocess

import pytest

from engines.config import PipelineConfig
from engines.kafka_streams import ENGINE, build, job
from engines.kafka_streams.job import jvm_config, prepare
from engines.kafka_streams.settings import KafkaStreamsSettings
from ground import rundir
from ground.contract import INPUT_FIELDS, SEQ
from ground.errors import ConfigError
from ground.malformed import MAX_INPUT_BYTES


def pipeline(tmp_path, stage="join", **settings) -> PipelineConfig:
    return PipelineConfig(
        stage=stage, output_topic="out", run_id="r1", bootstrap="localhost:9092",
        checkpoint_dir=str(tmp_path / "state"), engine="kafka-streams", settings=settings,
    )  # fmt: skip


def test_defaults_are_the_latency_settings(tmp_path):
    config = pipeline(tmp_path)
    assert isinstance(config.settings, KafkaStreamsSettings)
    props = config.settings.properties(config)
    assert props["producer.linger.ms"] == "0"  # Kafka Streams' own default is 100
    assert props["statestore.cache.max.bytes"] == "0"
    assert props["max.task.idle.ms"] == "500"  # the two topics kept in step
    assert props["processing.guarantee"] == "at_least_once"
    assert props["dsl.store.suppliers.class"].endswith("$InMemoryDslStoreSuppliers")
    assert props["application.id"] == "stagebench-r1"  # per run: --resume finds its state
    assert props["state.dir"] == str(tmp_path / "state")
    assert props["auto.offset.reset"] == "earliest"


def test_exactly_once_and_rocksdb_are_settings(tmp_path):
    config = pipeline(
        tmp_path, processing_guarantee="exactly-once-v2", state_store="rocksdb",
        commit_interval_ms=1000,
    )  # fmt: skip
    assert isinstance(config.settings, KafkaStreamsSettings)
    props = config.settings.properties(config)
    assert props["processing.guarantee"] == "exactly_once_v2"
    assert props["commit.interval.ms"] == "1000"
    assert props["dsl.store.suppliers.class"].endswith("$RocksDBDslStoreSuppliers")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"processing_guarantee": "exactly-once"},
            "processing_guarantee: expected one of 'at-least-once'",
        ),
        ({"state_store": "disk"}, "state_store: expected one of 'in-memory', 'rocksdb'"),
        ({"producer_linger_ms": -1}, "producer_linger_ms must be >= 0"),
        ({"commit_interval_ms": 0}, "commit_interval_ms must be >= 1"),
        ({"stream_threads": 0}, "stream_threads must be >= 1"),
        ({"linger": 0}, r"unknown key\(s\) in \[engine.kafka-streams\]: linger"),
    ],
)
def test_bad_settings_are_refused_in_one_line(tmp_path, settings, message):
    with pytest.raises(ConfigError, match=message) as err:
        pipeline(tmp_path, **settings)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("settings", [{"stream_threads": 2}, {"instances": 2}])
def test_more_threads_than_tasks_are_refused(tmp_path, settings):
    config = pipeline(tmp_path, **settings)
    assert isinstance(config.settings, KafkaStreamsSettings)
    config.settings.check(config, 4, None)  # 2 partitions a topic: 2 tasks
    with pytest.raises(ConfigError, match=r"the input topics make 1 task\(s\).*--partitions"):
        config.settings.check(config, 2, None)


def test_instance_loss_needs_several_instances(tmp_path):
    config = pipeline(tmp_path)
    assert isinstance(config.settings, KafkaStreamsSettings)
    with pytest.raises(ConfigError, match="instance-loss kills one instance of several"):
        config.settings.check(config, 4, "instance-loss")
    several = pipeline(tmp_path, instances=2)
    assert isinstance(several.settings, KafkaStreamsSettings)
    several.settings.check(several, 4, "instance-loss")
    assert several.settings.properties(several)["main.consumer.session.timeout.ms"] == "6000"


def test_each_instance_has_its_own_state_and_group_member(tmp_path):
    config = pipeline(tmp_path, instances=2)
    assert isinstance(config.settings, KafkaStreamsSettings)
    first, second = (config.settings.properties(config, i) for i in range(2))
    assert first["application.id"] == second["application.id"]
    assert first["state.dir"] != second["state.dir"]
    assert first["main.consumer.group.instance.id"] == "stagebench-r1-0"
    assert jvm_config(config, config.settings, tmp_path, 1)["ready_file"] == (
        f"instance-1.{rundir.READY}"
    )


def test_every_setting_says_what_it_does():
    import dataclasses

    for field in dataclasses.fields(KafkaStreamsSettings):
        assert len(field.metadata.get("help", "")) > 30, field.name


def test_the_jvm_gets_the_contract_tables_and_the_run_files(tmp_path):
    config = pipeline(tmp_path, stage="sliding")
    assert isinstance(config.settings, KafkaStreamsSettings)
    got = json.loads(json.dumps(jvm_config(config, config.settings, tmp_path)))
    assert got["stage"] == "sliding"
    assert got["contract"]["fields"] == list(INPUT_FIELDS)
    assert got["contract"]["max_bytes"] == MAX_INPUT_BYTES
    assert got["contract"]["ranges"][SEQ] == [0, 2**63 - 1]  # exact, not a rounded float
    assert got["ready_file"] == rundir.READY
    assert got["progress_file"] == rundir.PROGRESS
    assert got["join_grace_ms"] == 5000


def test_a_used_run_directory_is_refused_unless_resumed(tmp_path):
    config = pipeline(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / rundir.PROGRESS).write_text("")
    with pytest.raises(ConfigError, match="already holds a pipeline run"):
        prepare(config, tmp_path / "run", resume=False)
    prepare(config, tmp_path / "run", resume=True)


def test_the_engine_takes_an_engine_restart_and_warms_up():
    assert ENGINE.faults == ("engine-restart", "instance-loss")
    assert ENGINE.warms_up
    assert ENGINE.versions() == {"kafka_streams": "4.3.1"}


CANARY = "canary-7f3a"
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="bench" password="{CANARY}";'
)


@pytest.fixture
def secured(tmp_path, monkeypatch):
    """A client properties file whose SASL password is :data:`CANARY`."""
    properties = tmp_path / "client.properties"
    properties.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.jaas.config={JAAS}\n")
    monkeypatch.setenv("STAGEBENCH_KAFKA_PROPERTIES", str(properties))


def test_the_jvm_configuration_names_the_secret_but_its_value_comes_from_the_environment(
    tmp_path, secured, monkeypatch
):
    config = pipeline(tmp_path, stage="ingest", instances=2)
    started = []
    monkeypatch.setattr(build, "job_classpath", lambda store: "classes")
    monkeypatch.setattr(build, "version", lambda: "4.3.1")
    monkeypatch.setattr(job, "java_executable", lambda: "java")
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: started.append((cmd, kw)))
    job.start_jvms(config, tmp_path)
    for name in ("instance-0.kafka_streams.json", "instance-1.kafka_streams.json"):
        written = (tmp_path / name).read_text()
        assert CANARY not in written
        assert json.loads(written)["properties"]["sasl.jaas.config"] == "<redacted>"
        assert json.loads(written)["properties"]["security.protocol"] == "SASL_PLAINTEXT"
    assert len(started) == 2
    for command, options in started:
        assert CANARY not in " ".join(command)
        assert json.loads(options["env"][job.SECRETS]) == {"sasl.jaas.config": JAAS}
