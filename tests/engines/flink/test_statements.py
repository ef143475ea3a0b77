"""The Flink SQL a job runs, built without Flink: what each stage's statements hold, and
that the latency settings reach them."""

import json
import time

import pytest

from engines import registry
from engines.config import PipelineConfig
from engines.flink import ENGINE
from engines.flink.job import group_id, job_statements, latest_checkpoint
from engines.flink.settings import FlinkSettings
from engines.flink.statements import OUTPUT_FIELDS, quote, seconds, statements
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import STAGES


def flink_config(stage: str, bootstrap: str = "127.0.0.1:9092", **fields) -> PipelineConfig:
    values = {"output_topic": "out", "run_id": "r1", "checkpoint_dir": "/tmp/cp", **fields}
    return from_mapping(
        PipelineConfig, {"stage": stage, "engine": "flink", "bootstrap": bootstrap, **values},
        "pipeline",
    )  # fmt: skip


def test_flink_runs_every_engine_stage_and_is_registered():
    assert registry.engine("flink") is ENGINE
    assert set(ENGINE.stages) == set(STAGES) - {"floor", "job"}
    assert ENGINE.versions()["apache-flink"] == "2.2.1"


@pytest.mark.parametrize("stage", [s for s in STAGES if s not in ("floor", "job")])
def test_each_stage_builds_its_views_and_one_insert(stage):
    config = flink_config(stage)
    plan = job_statements(config, [])
    source, *views, sink = plan.ddl
    assert "CREATE TABLE raw_input" in source and "'topic' = 'speed;flow'" in source
    assert f"'properties.group.id' = '{group_id(config)}'" in source
    assert ("WATERMARK FOR et" in source) == (stage not in ("ingest", "parse"))
    assert views and all(v.startswith("CREATE TEMPORARY VIEW") for v in views)
    assert plan.insert.startswith("INSERT INTO stage_output")
    for name in OUTPUT_FIELDS[stage]:
        assert f"KEY '{name}' VALUE {name}" in plan.insert
    assert "'r1'" in plan.insert  # the run id
    assert "'properties.linger.ms' = '0'" in sink
    assert plan.settings["table.local-time-zone"] == "UTC"
    assert plan.settings["table.exec.source.idle-timeout"] == "10000 ms"


def test_latency_settings_reach_the_job():
    config = flink_config("tumbling", settings={"parallelism": 2, "idle_timeout_ms": 700})
    plan = job_statements(config, [])
    assert plan.settings["table.exec.source.idle-timeout"] == "700 ms"
    assert plan.settings["parallelism.default"] == "2"
    assert plan.settings["execution.buffer-timeout.interval"] == "0 ms"
    assert "'scan.watermark.emit.strategy' = 'on-event'" in plan.ddl[0]
    assert "'properties.enable.auto.commit' = 'true'" in plan.ddl[0]
    assert "checkpointing" not in " ".join(plan.settings)


def test_flink_conf_overrides_last_and_jars_are_uris(tmp_path):
    jar = tmp_path / "c.jar"
    config = flink_config("ingest", settings={"flink_conf": {"parallelism.default": "3"}})
    plan = job_statements(config, [jar])
    assert plan.settings["parallelism.default"] == "3"
    assert plan.settings["pipeline.jars"] == jar.as_uri()


def test_the_watermark_is_the_configured_delay_behind_the_observation_time():
    plan = statements(flink_config("join", watermark_delay_ms=250), "g", {}, {}, {})
    assert f"WATERMARK FOR et AS et - {seconds(250)}" in plan.ddl[0]
    assert seconds(250) == "INTERVAL '0.250' SECOND"


def test_the_updating_stage_writes_upserts_keyed_by_its_window():
    plan = statements(flink_config("tumbling-union"), "g", {}, {}, {})
    assert "'connector' = 'upsert-kafka'" in plan.ddl[-1]
    assert "PRIMARY KEY (k, ws)" in plan.ddl[-1]
    window = statements(flink_config("tumbling"), "g", {}, {}, {})
    assert "'connector' = 'kafka'" in window.ddl[-1] and "TUMBLE(" in window.ddl[-2]


def test_ingest_splices_the_record_unchanged():
    plan = statements(flink_config("ingest"), "g", {}, {}, {})
    assert "',\"record\":' || record || '}'" in plan.insert
    assert "AS k" not in plan.insert  # no key: ingest has no location id


def test_quote_escapes_single_quotes():
    assert quote("it's") == "'it''s'"


def test_settings_refuse_what_cannot_run():
    with pytest.raises(ConfigError, match="parallelism must be >= 1"):
        FlinkSettings(parallelism=0)
    settings = FlinkSettings(parallelism=4, idle_timeout_ms=0)
    with pytest.raises(ConfigError, match="idle_timeout_ms"):
        settings.check(flink_config("tumbling"), 2, None)
    settings.check(flink_config("ingest"), 2, None)
    with pytest.raises(ConfigError, match="checkpoint_interval_ms"):
        FlinkSettings().check(flink_config("join"), 2, "engine-restart")
    FlinkSettings(checkpoint_interval_ms=1000).check(flink_config("join"), 2, "engine-restart")
    with pytest.raises(ConfigError, match="idle_timeout_ms = 0 for broker faults"):
        FlinkSettings().check(flink_config("join"), 2, "broker-kill")
    FlinkSettings(idle_timeout_ms=0).check(flink_config("join"), 2, "broker-restart")


def test_a_session_cluster_takes_the_job_and_no_restart():
    settings = FlinkSettings(cluster="flink-jm.example:8081")
    plan = job_statements(flink_config("join", settings={"cluster": settings.cluster}), [])
    assert plan.settings["execution.target"] == "remote"
    assert (plan.settings["rest.address"], plan.settings["rest.port"]) == (
        "flink-jm.example",
        "8081",
    )
    assert settings.place == "session cluster flink-jm.example:8081, parallelism 1"
    with pytest.raises(ConfigError, match="engine-restart restarts the job on this machine"):
        FlinkSettings(cluster="h:1", checkpoint_interval_ms=1000).check(
            flink_config("join"), 2, "engine-restart"
        )
    for wrong in ("nohost", "h:port", ":8081", "h:0", "h:70000"):
        with pytest.raises(ConfigError, match="cluster must be a session cluster's REST address"):
            FlinkSettings(cluster=wrong)
    assert "execution.target" not in job_statements(flink_config("join"), []).settings


def test_a_checkpointed_job_writes_and_resumes_from_its_checkpoints(tmp_path):
    config = flink_config("join", settings={"checkpoint_interval_ms": 500})
    assert job_statements(config, []).settings["execution.checkpointing.dir"] == "file:///tmp/cp"
    assert latest_checkpoint(tmp_path) is None
    for job, n in (("a", 3), ("a", 4), ("b", 1)):
        chk = tmp_path / job / f"chk-{n}"
        chk.mkdir(parents=True)
        if n != 4:  # chk-4 is unfinished: no _metadata yet
            (chk / "_metadata").write_bytes(b"")
        time.sleep(0.01)
    newest = latest_checkpoint(tmp_path)
    assert newest == tmp_path / "b" / "chk-1"
    plan = job_statements(config, [], newest)
    assert plan.settings["execution.state-recovery.path"] == newest.as_uri()


def test_the_statements_kept_in_the_run_directory_hold_no_secret(tmp_path, monkeypatch):
    canary = "canary-7f3a"
    jaas = f'PlainLoginModule required username="bench" password="{canary}";'
    properties = tmp_path / "client.properties"
    properties.write_text(f"security.protocol=SASL_SSL\nsasl.jaas.config={jaas}\n")
    monkeypatch.setenv("STAGEBENCH_KAFKA_PROPERTIES", str(properties))
    config = flink_config("join")
    kept = job_statements(config, [], redact=True)
    run = job_statements(config, [])
    for table in (kept.ddl[0], kept.ddl[-1], run.ddl[0], run.ddl[-1]):
        assert "'properties.security.protocol' = 'SASL_SSL'" in table
    assert canary not in json.dumps(kept.as_dict())
    assert "'properties.sasl.jaas.config' = '<redacted>'" in kept.ddl[0]
    assert f"'properties.sasl.jaas.config' = {quote(jaas)}" in run.ddl[-1]
    assert kept.settings == run.settings and kept.insert == run.insert
