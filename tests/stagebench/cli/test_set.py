"""``--set TABLE.KEY=VALUE``: any key of a configuration file's table on the command line of
run, suite, capacity and config show, layered over the file, validated before anything
starts and shown with its source."""

import json

import pytest

from ground.errors import ConfigError
from stagebench.cli.options import run_overrides
from stagebench.config.layers import CLI, load, parse_set
from tests.engines.test_config import subcommand
from tests.stagebench.cli.test_errors import stagebench


def test_a_key_of_each_kind_of_table_reads_as_the_file_would_hold_it():
    assert parse_set(
        [
            "engine.flink.buffer_timeout_ms=100",
            "pipeline.watermark_delay_ms=1000",
            "engine.spark.master=local[4]",  # no TOML value: the text
            "engine.kafka-streams.processing_guarantee=exactly-once-v2",
            "publisher.seed=7",
            "evaluator.steady_tolerance=0.2",
            "engine.spark.spark_conf.spark.sql.shuffle.partitions=4",  # an entry, as text
            "engine.spark.spark_conf.spark.ui.enabled=false",
        ]
    ) == {
        "engine.flink": {"buffer_timeout_ms": 100},
        "pipeline": {"watermark_delay_ms": 1000},
        "engine.spark": {
            "master": "local[4]",
            "spark_conf": {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"},
        },
        "engine.kafka-streams": {"processing_guarantee": "exactly-once-v2"},
        "publisher": {"seed": 7},
        "evaluator": {"steady_tolerance": 0.2},
    }


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("engine.flink.buffer_timeout_ms", "--set expects TABLE.KEY=VALUE"),
        ("flink.buffer_timeout_ms=1", "--set expects TABLE.KEY=VALUE with a table of publisher"),
        ("engine.flink=1", "--set expects TABLE.KEY=VALUE"),
        ("run.rate=5", "[run] rate is an option of its own"),
        ("engine.flink.linger_ms.x=1", "[engine.flink] linger_ms is no table of its own"),
    ],
)
def test_a_pair_that_names_no_key_is_refused(pair, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_set([pair])


def test_a_table_set_whole_takes_no_entry_of_its_own():
    with pytest.raises(ConfigError, match=r"\[engine.spark\] spark_conf is set whole by"):
        parse_set(["engine.spark.spark_conf=oops", "engine.spark.spark_conf.a=1"])


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        (
            "engine.flink.buffer_timeout_ms=abc",
            "[engine.flink] buffer_timeout_ms: expected a whole",
        ),
        ("engine.flink.nope=1", "unknown key [engine.flink] nope in command line (known: "),
        ("engine.flink.parallelism=0", "[engine.flink] "),
        ("pipeline.watermark_delay_ms=1.5", "[pipeline] watermark_delay_ms: expected a whole"),
        ("pipeline.run_id=x", "[pipeline] run_id cannot be set: it comes from the run"),
    ],
)
def test_a_bad_key_or_value_is_refused_by_the_typed_configuration(pair, message):
    """Whichever engine runs: a table given is checked whole."""
    with pytest.raises(ConfigError) as err:
        load(None, {"run": {"engine": "spark"}, **parse_set([pair])})
    assert str(err.value).startswith(message)


def test_set_lies_over_the_file_and_a_table_s_entries_add_to_its_own(tmp_path):
    path = tmp_path / "bench.toml"
    path.write_text(
        "[engine.flink]\nbuffer_timeout_ms = 5\nlinger_ms = 3\n"
        '[engine.spark.spark_conf]\n"spark.a" = "1"\n"spark.b" = "1"\n'
    )
    args = subcommand("suite").parse_args(
        [
            "--set",
            "engine.flink.buffer_timeout_ms=100",
            "--set",
            "engine.spark.spark_conf.spark.b=2",
            "--set",
            "publisher.seed=7",
        ]
    )
    settings = load(path, run_overrides(args))
    assert settings.values["engine.flink"] == {"buffer_timeout_ms": 100, "linger_ms": 3}
    assert settings.sources["engine.flink"] == {
        "buffer_timeout_ms": CLI,
        "linger_ms": f"file {path}",
    }
    assert settings.values["engine.spark"]["spark_conf"] == {"spark.a": "1", "spark.b": "2"}
    assert settings.sources["engine.spark"]["spark_conf"] == f"file {path}, {CLI}"
    assert settings.sources["publisher"]["seed"] == CLI  # a key after the merged table's


@pytest.mark.parametrize("command", ["run", "suite", "capacity"])
def test_run_suite_and_capacity_take_it_and_refuse_it_beside_the_key_s_own_option(command):
    parser = subcommand(command)
    extra = ["--stage", "join"] if command == "capacity" else []
    args = parser.parse_args([*extra, "--set", "engine.spark.trigger_interval_ms=500"])
    assert run_overrides(args)["engine.spark"] == {"trigger_interval_ms": 500}
    both = parser.parse_args([*extra, "--master", "local[4]", "--set", "engine.spark.master=yarn"])
    with pytest.raises(ConfigError, match=r"--set engine\.spark\.master and its option both set"):
        run_overrides(both)


def test_config_show_names_the_command_line_as_its_source_and_a_bad_value_is_one_line():
    shown = stagebench("config", "show", "--json", "--set", "engine.flink.buffer_timeout_ms=100")
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert {"section": "engine.flink", "key": "buffer_timeout_ms", "value": 100,
            "source": CLI} in rows  # fmt: skip
    bad = stagebench("config", "show", "--set", "engine.flink.buffer_timeout_ms=soon")
    assert bad.returncode == 2
    assert bad.stderr == (
        "ERROR: [engine.flink] buffer_timeout_ms: expected a whole number, got 'soon'\n"
    )
