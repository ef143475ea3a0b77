"""PipelineConfig validation and the ``stagebench pipeline`` arguments (no Spark, no Kafka)."""

import argparse
import subprocess
import sys

import pytest

from engines.config import PipelineConfig
from engines.spark.settings import SparkSettings
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


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"stage": "window"}, "unknown stage .window."),
        ({"stage": "join", "impl": "custom"}, "impl 'custom' exists only"),
        ({"stage": "join", "trigger": "real-time"}, "real-time mode does not support"),
        ({"impl": "custom", "trigger": "real-time"}, "real-time mode does not support"),
        ({"stage": "sliding", "trigger": "real-time"}, "real-time mode does not support"),
        ({"stage": "tumbling", "trigger": "real-time"}, "real-time mode does not support"),
        ({"lookback_long_ms": 3000}, "0 < short < long < window length"),
        ({"window_slide_ms": 1500}, "multiple of 1000"),
        ({"output_topic": "speed"}, "output_topic must differ"),
        ({"unknown_key": 1}, "unknown key"),
    ],
)
def test_invalid_configs_are_rejected(overrides, message):
    with pytest.raises(ConfigError, match=message):
        make(**overrides)


def test_real_time_mode_accepted_where_spark_supports_it():
    for stage in ("ingest", "parse", "tumbling-union"):
        assert make(stage=stage, trigger="real-time").trigger == "real-time"


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
    assert config.window_length_ms == 3000  # untouched options keep the config default
    assert config.settings == SparkSettings(
        max_offsets_per_trigger=100, spark_conf={"spark.x": "a=b"}
    )
    assert config.settings.master == "local[2]"
    assert config.settings.real_time_checkpoint == "5 minutes"


def test_real_time_checkpoint_option_and_help_state_their_defaults(tmp_path):
    parser = subcommand("pipeline")
    args = parser.parse_args(
        ["--stage", "ingest", "--output-topic", "o", "--run-dir", str(tmp_path / "r"),
         "--trigger", "real-time", "--real-time-checkpoint", "10 seconds"]
    )  # fmt: skip
    assert config_from_args(args, "host:1").settings.real_time_checkpoint == "10 seconds"
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
