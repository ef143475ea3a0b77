"""PipelineConfig validation and the ``stagebench pipeline`` arguments (no Spark, no Kafka)."""

import argparse
import subprocess
import sys

import pytest

from engines.config import (
    FILE_SCHEME_CONF,
    FILE_SYSTEM_CLASS,
    LOCAL_CHECKPOINT_CONF,
    ROCKSDB_PROVIDER,
    PipelineConfig,
)
from ground.config import from_mapping
from ground.errors import ConfigError
from stagebench.cli import build_parser
from stagebench.cli.pipeline import config_from_args

REQUIRED = {
    "stage": "tumbling",
    "output_topic": "out",
    "run_id": "r1",
    "bootstrap": "127.0.0.1:9092",
    "checkpoint_dir": "/tmp/cp",
}


def subcommand(name: str) -> argparse.ArgumentParser:
    """The parser of one ``stagebench`` subcommand."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def make(**overrides) -> PipelineConfig:
    return from_mapping(PipelineConfig, {**REQUIRED, **overrides}, "pipeline")


def test_spark_conf_has_latency_settings_and_overrides_win():
    conf = make(shuffle_partitions=3, spark_conf={"spark.sql.shuffle.partitions": "7"})
    effective = conf.spark_conf_effective()
    assert effective["spark.sql.streaming.stateStore.providerClass"] == ROCKSDB_PROVIDER
    assert (
        effective["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] == "true"
    )
    assert effective["spark.sql.session.timeZone"] == "UTC"
    assert effective["spark.sql.streaming.noDataProgressEventInterval"] == "200"
    assert effective["spark.sql.shuffle.partitions"] == "7"
    assert make(shuffle_partitions=3).spark_conf_effective()["spark.sql.shuffle.partitions"] == "3"


def test_the_jvm_options_come_before_the_users_options():
    driver, executor = "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"
    effective = make().spark_conf_effective()
    assert effective[driver] == "-XX:+UseParallelGC -XX:CompileThresholdScaling=0.25"
    assert effective[executor] == "-XX:CompileThresholdScaling=0.25"  # a cluster's heaps
    mine = make(jit_threshold_scaling=0.5, spark_conf={driver: "-Xss4m"}).spark_conf_effective()
    assert mine[driver] == "-XX:+UseParallelGC -XX:CompileThresholdScaling=0.5 -Xss4m"
    assert mine[executor] == "-XX:CompileThresholdScaling=0.5"
    only_gc = make(jit_threshold_scaling=1).spark_conf_effective()
    assert only_gc[driver] == "-XX:+UseParallelGC"
    assert executor not in only_gc
    jvm = make(garbage_collector="jvm", jit_threshold_scaling=1).spark_conf_effective()
    assert not {driver, executor} & jvm.keys()
    users = make(garbage_collector="jvm", jit_threshold_scaling=1, spark_conf={executor: "-Xss4m"})
    assert users.spark_conf_effective()[executor] == "-Xss4m"


def test_a_collector_of_the_users_own_replaces_ours():
    # the JVM will not start with two collectors ("Multiple garbage collectors selected")
    driver = "spark.driver.extraJavaOptions"
    g1 = make(spark_conf={driver: "-XX:+UseG1GC -Xss4m"}).spark_conf_effective()[driver]
    assert g1 == "-XX:CompileThresholdScaling=0.25 -XX:+UseG1GC -Xss4m"
    zgc = make(jit_threshold_scaling=1, spark_conf={driver: "-XX:+UseZGC"})
    assert zgc.spark_conf_effective()[driver] == "-XX:+UseZGC"
    other = make(spark_conf={driver: "-XX:+UseAdaptiveSizePolicyWithSystemGC"})
    assert other.spark_conf_effective()[driver].startswith("-XX:+UseParallelGC ")


@pytest.mark.parametrize(
    ("checkpoint", "local"),
    [("/tmp/run/checkpoint", True), ("file:///tmp/run/checkpoint", True),
     ("hdfs://namenode:8020/stagebench/run", False)],
)  # fmt: skip
def test_a_local_checkpoint_gets_the_plain_file_system(checkpoint, local):
    effective = make(checkpoint_dir=checkpoint).spark_conf_effective()
    if local:
        assert LOCAL_CHECKPOINT_CONF.items() <= effective.items()
    else:
        assert not LOCAL_CHECKPOINT_CONF.keys() & effective.keys()
    # the user's spark_conf still wins
    mine = {"spark.sql.streaming.checkpointFileManagerClass": "my.Manager"}
    assert make(checkpoint_dir=checkpoint, spark_conf=mine).spark_conf_effective().items() >= (
        mine.items()
    )


@pytest.mark.parametrize(
    ("overrides", "ours"),
    [({}, True), ({"master": "local"}, True), ({"master": "local[*]"}, True),
     ({"file_permissions": "chmod"}, False),
     ({"master": "spark://head:7077"}, False),  # executors elsewhere cannot load the class
     ({"checkpoint_dir": "hdfs://namenode:8020/run"}, False)],
)  # fmt: skip
def test_a_local_checkpoint_in_a_local_jvm_sets_permissions_without_forking(overrides, ours):
    effective = make(**overrides).spark_conf_effective()
    assert (effective.get(FILE_SCHEME_CONF) == FILE_SYSTEM_CLASS) is ours
    assert ours or FILE_SCHEME_CONF not in effective


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"stage": "window"}, "unknown stage .window."),
        ({"stage": "join", "impl": "custom"}, "impl 'custom' exists only"),
        ({"stage": "join", "trigger": "real-time"}, "real-time mode does not support"),
        ({"jit_threshold_scaling": 0}, "jit_threshold_scaling must be > 0"),
        ({"garbage_collector": "g1"}, "garbage_collector must be one of parallel, jvm"),
        ({"file_permissions": "native"}, "file_permissions must be jvm or chmod"),
        ({"impl": "custom", "trigger": "real-time"}, "real-time mode does not support"),
        ({"stage": "sliding", "trigger": "real-time"}, "real-time mode does not support"),
        ({"stage": "tumbling", "trigger": "real-time"}, "real-time mode does not support"),
        ({"lookback_long_ms": 3000}, "0 < short < long < window length"),
        ({"window_slide_ms": 1500}, "multiple of 1000"),
        ({"output_topic": "speed"}, "output_topic must differ"),
        ({"max_offsets_per_trigger": 0}, "max_offsets_per_trigger"),
        ({"unknown_key": 1}, "unknown key"),
    ],
)
def test_invalid_configs_are_rejected(overrides, message):
    with pytest.raises(ConfigError, match=message):
        make(**overrides)


def test_real_time_mode_accepted_where_spark_supports_it():
    for stage in ("ingest", "parse", "tumbling-union"):
        assert make(stage=stage, trigger="real-time").trigger == "real-time"


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
    config = make(stage=stage, trigger="real-time", master=master, shuffle_partitions=shuffle)
    if needed is None:
        config.check_real_time_slots(partitions)
        return
    with pytest.raises(
        ConfigError, match=rf" = {needed}, but master .* use e.g. --master local\[{needed}\]"
    ):
        config.check_real_time_slots(partitions)


def test_slots_of_a_cluster_master_are_not_checked():
    make(
        stage="tumbling-union", trigger="real-time", master="spark://h:7077"
    ).check_real_time_slots(8)


def test_arguments_build_the_config(tmp_path):
    parser = subcommand("pipeline")
    args = parser.parse_args(
        ["--stage", "sliding", "--impl", "custom", "--output-topic", "o",
         "--run-dir", str(tmp_path / "run-7"), "--watermark-delay-ms", "1500",
         "--conf", "spark.x=a=b", "--max-offsets-per-trigger", "100"]
    )  # fmt: skip
    config = config_from_args(args, "host:1")
    assert config.run_id == "run-7"
    assert config.checkpoint_dir == str(tmp_path / "run-7" / "checkpoint")
    assert (config.stage, config.impl, config.bootstrap) == ("sliding", "custom", "host:1")
    assert config.watermark_delay_ms == 1500
    assert config.max_offsets_per_trigger == 100
    assert config.spark_conf == {"spark.x": "a=b"}
    assert config.window_length_ms == 3000  # untouched options keep the config default
    assert config.master == "local[2]" == PipelineConfig.__dataclass_fields__["master"].default
    assert config.real_time_checkpoint == "5 minutes"


def test_real_time_checkpoint_option_and_help_state_their_defaults(tmp_path):
    parser = subcommand("pipeline")
    args = parser.parse_args(
        ["--stage", "ingest", "--output-topic", "o", "--run-dir", str(tmp_path / "r"),
         "--trigger", "real-time", "--real-time-checkpoint", "10 seconds"]
    )  # fmt: skip
    assert config_from_args(args, "host:1").real_time_checkpoint == "10 seconds"
    text = " ".join(parser.format_help().split())
    assert "(default: 5 minutes)" in text and "(default: local[2]" in text


@pytest.mark.parametrize(
    "extra",
    [["--stage", "join", "--trigger", "real-time"], ["--stage", "ingest", "--conf", "novalue"]],
)
def test_cli_rejects_bad_options_with_one_line_error(tmp_path, extra):
    result = subprocess.run(
        [sys.executable, "-m", "stagebench", "pipeline", "--output-topic", "o",
         "--run-dir", str(tmp_path / "run"), *extra],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("ERROR: ")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()
