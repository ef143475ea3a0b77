"""Spark's settings, ``[engine.spark]``: the Spark conf they make and the checks they
make of a pipeline (no Spark, no Kafka)."""

import pytest

from engines.spark.settings import (
    FILE_SCHEME_CONF,
    FILE_SYSTEM_CLASS,
    LOCAL_CHECKPOINT_CONF,
    ROCKSDB_PROVIDER,
    SparkSettings,
    spark_settings,
)
from ground.errors import ConfigError
from tests.engines.test_config import make


def conf(checkpoint_dir: str = "/tmp/cp", **settings) -> dict[str, str]:
    """The Spark conf of a pipeline with these ``[engine.spark]`` settings."""
    pipeline = make(checkpoint_dir=checkpoint_dir, settings=settings)
    return spark_settings(pipeline).conf(pipeline)


def test_spark_conf_has_latency_settings_and_overrides_win():
    effective = conf(shuffle_partitions=3, spark_conf={"spark.sql.shuffle.partitions": "7"})
    assert effective["spark.sql.streaming.stateStore.providerClass"] == ROCKSDB_PROVIDER
    assert (
        effective["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] == "true"
    )
    assert effective["spark.sql.session.timeZone"] == "UTC"
    assert effective["spark.sql.streaming.noDataProgressEventInterval"] == "200"
    assert effective["spark.sql.shuffle.partitions"] == "7"
    assert conf(shuffle_partitions=3)["spark.sql.shuffle.partitions"] == "3"


def test_the_jvm_options_come_before_the_users_options():
    driver, executor = "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"
    effective = conf()
    assert effective[driver] == "-XX:+UseParallelGC -XX:CompileThresholdScaling=0.25"
    assert effective[executor] == "-XX:CompileThresholdScaling=0.25"  # a cluster's heaps
    mine = conf(jit_threshold_scaling=0.5, spark_conf={driver: "-Xss4m"})
    assert mine[driver] == "-XX:+UseParallelGC -XX:CompileThresholdScaling=0.5 -Xss4m"
    assert mine[executor] == "-XX:CompileThresholdScaling=0.5"
    only_gc = conf(jit_threshold_scaling=1)
    assert only_gc[driver] == "-XX:+UseParallelGC"
    assert executor not in only_gc
    jvm = conf(garbage_collector="jvm", jit_threshold_scaling=1)
    assert not {driver, executor} & jvm.keys()
    users = conf(garbage_collector="jvm", jit_threshold_scaling=1, spark_conf={executor: "-Xss4m"})
    assert users[executor] == "-Xss4m"


def test_a_collector_of_the_users_own_replaces_ours():
    # the JVM will not start with two collectors ("Multiple garbage collectors selected")
    driver = "spark.driver.extraJavaOptions"
    g1 = conf(spark_conf={driver: "-XX:+UseG1GC -Xss4m"})[driver]
    assert g1 == "-XX:CompileThresholdScaling=0.25 -XX:+UseG1GC -Xss4m"
    zgc = conf(jit_threshold_scaling=1, spark_conf={driver: "-XX:+UseZGC"})
    assert zgc[driver] == "-XX:+UseZGC"
    other = conf(spark_conf={driver: "-XX:+UseAdaptiveSizePolicyWithSystemGC"})
    assert other[driver].startswith("-XX:+UseParallelGC ")


@pytest.mark.parametrize(
    ("checkpoint", "local"),
    [("/tmp/run/checkpoint", True), ("file:///tmp/run/checkpoint", True),
     ("hdfs://namenode:8020/stagebench/run", False)],
)  # fmt: skip
def test_a_local_checkpoint_gets_the_plain_file_system(checkpoint, local):
    effective = conf(checkpoint_dir=checkpoint)
    if local:
        assert LOCAL_CHECKPOINT_CONF.items() <= effective.items()
    else:
        assert not LOCAL_CHECKPOINT_CONF.keys() & effective.keys()
    # the user's spark_conf still wins
    mine = {"spark.sql.streaming.checkpointFileManagerClass": "my.Manager"}
    assert conf(checkpoint_dir=checkpoint, spark_conf=mine).items() >= (mine.items())


@pytest.mark.parametrize(
    ("overrides", "ours"),
    [({}, True), ({"master": "local"}, True), ({"master": "local[*]"}, True),
     ({"file_permissions": "chmod"}, False),
     ({"master": "spark://head:7077"}, False),  # executors elsewhere cannot load the class
     ({"checkpoint_dir": "hdfs://namenode:8020/run"}, False)],
)  # fmt: skip
def test_a_local_checkpoint_in_a_local_jvm_sets_permissions_without_forking(overrides, ours):
    effective = conf(**overrides)
    assert (effective.get(FILE_SCHEME_CONF) == FILE_SYSTEM_CLASS) is ours
    assert ours or FILE_SCHEME_CONF not in effective


@pytest.mark.parametrize(
    ("stage", "master", "shuffle", "partitions", "needed"),
    [
        ("ingest", "local[2]", 2, 2, None),  # one task per input partition
        ("ingest", "local[2]", 2, 4, 4),
        ("tumbling-union", "local[4]", 2, 2, None),  # and one per shuffle partition
        ("tumbling-union", "local[2]", 2, 2, 4),
        ("tumbling-union", "local[2]", 1, 2, 3),
        ("tumbling-union", "local", 1, 2, 3),
    ],
)
def test_real_time_mode_needs_a_slot_for_every_task(stage, master, shuffle, partitions, needed):
    config = make(
        stage=stage, trigger="real-time",
        settings={"master": master, "shuffle_partitions": shuffle},
    )  # fmt: skip
    settings = spark_settings(config)
    if needed is None:
        settings.check(config, partitions, None)
        return
    with pytest.raises(
        ConfigError, match=rf" = {needed}, but master .* use e.g. --master local\[{needed}\]"
    ):
        settings.check(config, partitions, None)


def test_slots_of_a_cluster_master_are_not_checked():
    config = make(
        stage="tumbling-union", trigger="real-time", settings={"master": "spark://h:7077"}
    )
    spark_settings(config).check(config, 8, None)


def test_worker_loss_needs_a_standalone_cluster():
    config = make(stage="join")
    with pytest.raises(ConfigError, match="worker-loss kills an executor"):
        spark_settings(config).check(config, 2, "worker-loss")
    cluster = make(stage="join", settings={"master": "spark://h:7077"})
    spark_settings(cluster).check(cluster, 2, "worker-loss")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"jit_threshold_scaling": 0}, "jit_threshold_scaling must be > 0"),
        (
            {"garbage_collector": "g1"},
            r"\[engine.spark\] garbage_collector: expected one of 'parallel', 'jvm'",
        ),
        ({"file_permissions": "native"}, "file_permissions: expected one of 'jvm', 'chmod'"),
        ({"max_offsets_per_trigger": 0}, "max_offsets_per_trigger"),
        ({"trigger_interval_ms": -1}, "trigger_interval_ms must be >= 0"),
        ({"spark_conf": {"spark.x": 1}}, "spark_conf keys and values must be strings"),
        ({"unknown_key": 1}, r"unknown key\(s\) in \[engine.spark\]: unknown_key"),
    ],
)
def test_invalid_settings_are_rejected(settings, message):
    with pytest.raises(ConfigError, match=message):
        make(settings=settings)


def test_a_pipeline_spark_runs_gets_its_defaults_and_the_floor_none():
    assert make().settings == SparkSettings()
    assert make(stage="floor").settings is None
    with pytest.raises(ConfigError, match="the floor has no settings of its own"):
        make(stage="floor", settings={"master": "local[4]"})


def test_only_micro_batches_share_an_application():
    micro = make(stage="ingest")
    assert spark_settings(micro).session_conf(micro) == {
        "master": "local[2]",
        "spark_conf": dict(sorted(conf().items())),
    }
    real_time = make(stage="ingest", trigger="real-time")
    assert spark_settings(real_time).session_conf(real_time) is None


def test_sparks_kafka_clients_take_a_secured_clusters_properties_as_they_are(tmp_path, monkeypatch):
    from engines.spark.source import kafka_options

    monkeypatch.delenv("STAGEBENCH_KAFKA_PROPERTIES", raising=False)
    assert kafka_options() == {}
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=SSL\nssl.truststore.location=/ca.jks\n")
    monkeypatch.setenv("STAGEBENCH_KAFKA_PROPERTIES", str(properties))
    assert kafka_options() == {
        "kafka.security.protocol": "SSL",
        "kafka.ssl.truststore.location": "/ca.jks",
    }
