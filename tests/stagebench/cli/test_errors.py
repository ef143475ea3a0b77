"""User mistakes give one ERROR line and a non-zero exit, never a traceback."""

import argparse
import json
import os
import resource
import subprocess
import sys

import pytest

from ground.kafka.ports import free_port
from stagebench.cli import build_parser
from tests.stagebench.results_dirs import make_run


def stagebench(*args: str, env_extra=None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "stagebench", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_unknown_subcommand():
    result = stagebench("frobnicate")
    assert result.returncode == 2
    assert "invalid choice: 'frobnicate'" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_subcommand_has_help():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) == 14
    for name in sub.choices:
        result = stagebench(name, "--help")
        assert result.returncode == 0, (name, result.stderr)
        assert result.stdout.startswith(f"usage: stagebench {name}"), name
        assert "(default" in result.stdout or name in ("broker", "topics", "config"), name


HEAVY = ("pandas", "pyspark", "numpy", "scipy", "pyarrow")
LOADED = """
import sys
from stagebench.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY)))
"""


@pytest.mark.parametrize(
    "command",
    [[], ["run"], ["suite"], ["capacity"], ["report"], ["history"], ["compare"], ["publish"],
     ["pipeline"], ["evaluate"]],
)  # fmt: skip
def test_help_loads_no_data_or_spark_library(command):
    # --help is read often and must answer at once: the libraries of the evaluation
    # and the job load only in the command that runs
    result = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{LOADED}", *command, "--help"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout[-500:]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--from", "0"], "--from must be > 0 msg/s"),
        (["--from", "-5"], "--from must be > 0 msg/s"),
        (["--from", "2000", "--max", "1000"], "--max (1000) must not be below --from (2000)"),
        (["--precision", "0"], "--precision must be in (0, 1)"),
        (["--precision", "1.5"], "--precision must be in (0, 1)"),
        (["--growth", "1"], "--growth must be > 1, got 1"),
        (
            ["--budget", "soon"],
            "--budget: expected a time > 0 such as 30m, 1h, 90s or 900 (seconds), got 'soon'",
        ),
        (["--stages", "ingest,nope"], "unknown stage 'nope' (stages: floor, ingest"),
        (
            ["--stages", "floor"],
            "'floor' has no capacity of its own: it is the Kafka round "
            "trip every engine's stage pays",
        ),
        (["--slo", "p99<1s"], "--slo: expected PERCENTILE=BOUND with ms or s, such as p99=1s"),
        (["--engines", "spark,storm"], "--engines: no engine 'storm' (engines: spark, flink, "),
        (["--engines", "spark,spark"], "--engines: name each engine once"),
        (["--engines", "flink", "--engine", "spark"], "give --engine or --engines, not both"),
        (["--engines", "flink@real-time"], "--engines: Flink has no real-time mode (it has: "),
        (
            ["--stages", "join", "--engines", "spark@real-time"],
            "real-time mode does not support stage 'join'",
        ),
    ],
)
def test_capacity_bad_settings_are_one_clear_line(tmp_path, options, message):
    result = stagebench("capacity", *(options if "--stages" in options else
                                      ["--stage", "ingest", *options]),
                        "--results", str(tmp_path))  # fmt: skip
    assert result.returncode == 2, result.stderr  # a configuration error
    assert result.stderr.startswith("ERROR: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[run]\nrate = "fast"\n', "ERROR: [run] rate: expected a number, got 'fast'"),
        ("[pipeline]\nwatermark_delay_ms = -5\n",
         "ERROR: [pipeline] watermark_delay_ms must be >= 0"),
        ('[engine.spark]\ngarbage_collector = "g1"\n',
         "ERROR: [engine.spark] garbage_collector: expected one of 'parallel', 'jvm', got 'g1'"),
    ],
)  # fmt: skip
def test_a_bad_value_in_a_configuration_file_names_its_key(tmp_path, toml, message):
    config = tmp_path / "bench.toml"
    config.write_text(toml)
    result = stagebench("config", "show", "--config", str(config))
    assert result.returncode == 2 and result.stderr.strip() == message, result.stderr


@pytest.mark.parametrize(
    "command",
    [["compare", "{nope}"], ["report", "{nope}"], ["history", "--results", "{nope}"],
     ["compare", "--baseline", "{nope}", "{nope}"], ["compare", "{empty}"]],
)  # fmt: skip
def test_a_path_that_is_no_results_directory_is_bad_input_in_every_command(tmp_path, command):
    (tmp_path / "empty").mkdir()
    paths = {"nope": str(tmp_path / "nope"), "empty": str(tmp_path / "empty")}
    result = stagebench(*(arg.format(**paths) for arg in command))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("ERROR: ") and str(tmp_path) in result.stderr


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        ("ingest,nope", "unknown stage(s) ['nope']"),
        ("parse,join@real-time", "join@real-time: Spark's real-time mode cannot run stage 'join'"),
        ("tumbling-union@continuous", "unknown trigger 'continuous' after @"),
        ("tumbling,join/custom", "impl 'custom' exists only for"),
    ],
)
def test_suite_bad_stages_are_one_clear_line(tmp_path, stages, message):
    result = stagebench("suite", "--stages", stages, "--results", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ERROR: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--repeat", "auto"], "--repeat auto needs --budget, such as --budget 2h"),
        (["--budget", "2h"], "--budget goes with --repeat auto"),
        (["--repeat", "auto", "--budget", "soon"], "--budget: expected a time > 0 such as 30m"),
        (["--repeat", "0"], "--repeat must be at least 1"),
    ],
)
def test_suite_bad_rounds_are_one_clear_line(tmp_path, options, message):
    result = stagebench("suite", *options, "--results", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ERROR: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_real_time_window_with_too_few_slots_is_refused_before_the_run(tmp_path):
    """tumbling-union in real-time mode on local[2]: 2 input partitions and 2 shuffle
    partitions need 4 task slots at once; refused before any topic or directory."""
    config = tmp_path / "stagebench.toml"
    config.write_text('[pipeline]\ntrigger = "real-time"\n[engine.spark]\nshuffle_partitions = 2\n')
    results = tmp_path / "results"
    result = stagebench(
        "run", "--stage", "tumbling-union", "--master", "local[2]", "--config", str(config),
        "--results", str(results), "--bootstrap", "127.0.0.1:1",
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ERROR: real-time mode needs a task slot for every task")
    assert "= 4, but master local[2] has 2" in result.stderr
    assert not results.exists()


@pytest.mark.integration
def test_unreachable_bootstrap():
    address = f"127.0.0.1:{free_port()}"
    result = stagebench("topics", "check", "t", "--bootstrap", address)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(
        f"ERROR: cannot reach Kafka at {address} within 10 s: is it running, "
        "and is the address right? (last error: "
    )


def test_missing_java(tmp_path):
    result = stagebench(
        "broker", "start",
        env_extra={"JAVA_HOME": str(tmp_path / "nojava"), "STAGEBENCH_HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "ERROR: no Java runtime found: install a Java 17+ runtime (e.g. the "
        "openjdk-17-jre-headless package) or set JAVA_HOME"
    ]


def test_output_cut_short_by_the_reader_is_no_error():
    # `stagebench config show | head`: here the reader is gone before the first line
    shell = f"{sys.executable} -m stagebench config show | true"
    result = subprocess.run(
        ["bash", "-c", f"{shell}; exit ${{PIPESTATUS[0]}}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.stderr == ""
    assert result.returncode == 141


def test_compare_refuses_a_summary_of_an_unknown_schema_version(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    summary = {"schema_version": 99, "run": {"stage": "ingest", "impl": "builtin"}}
    (run_dir / "summary.json").write_text(json.dumps(summary))
    result = stagebench("compare", str(run_dir))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"ERROR: {run_dir / 'summary.json'} has schema_version 99; this stagebench reads "
        "schema_version 1 only: read it with the stagebench that wrote it, or evaluate the "
        "run again"
    ]


@pytest.mark.parametrize("option", ["--engine", "--no-plots", "--log-scale"])
def test_the_evaluators_removed_options_are_named(tmp_path, option):
    result = stagebench("evaluate", str(tmp_path), option)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"unrecognized arguments: {option}" in result.stderr


def _no_file_grows() -> None:
    # a disk with no room left, for root too (who writes into a directory of mode 0555)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["run", "--stage", "floor", "--bootstrap", "127.0.0.1:1", "--results", "{results}"],
         "ERROR: cannot write in {results}: File too large"),
        (["history", "--results", "{results}"],
         "ERROR: cannot write the history index {results}/history.sqlite: File too large"),
    ],
)  # fmt: skip
def test_results_that_cannot_be_written_are_one_line_before_anything_starts(
    tmp_path, command, message
):
    results = tmp_path / "results"
    results.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", *(a.format(results=results) for a in command)],
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=_no_file_grows,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [message.format(results=results)]
    assert not list(results.iterdir())


def test_a_results_path_through_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    results = tmp_path / "file" / "results"
    done = stagebench("run", "--stage", "floor", "--bootstrap", "127.0.0.1:1",
                      "--results", str(results))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [f"ERROR: cannot create {results}: Not a directory"]


def test_a_config_that_is_a_directory_or_not_utf8_is_one_line(tmp_path):
    done = stagebench("config", "show", "--config", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ERROR: config file {tmp_path}: a directory, not a file"
    ]
    config = tmp_path / "bench.toml"
    config.write_bytes(b"[run]\nrate = 100  # \xff\n")
    done = stagebench("config", "show", "--config", str(config))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ERROR: config file {config}: line 2, column 15: byte 0xff is not UTF-8 "
        "(save the file as UTF-8)"
    ]


def test_a_properties_file_that_is_not_utf8_is_one_line(tmp_path):
    properties = tmp_path / "client.properties"
    properties.write_bytes(b"security.protocol=SASL_SSL\nsasl.mechanism=PL\xc3\n")
    done = stagebench("config", "show", env_extra={"STAGEBENCH_KAFKA_PROPERTIES": str(properties)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"ERROR: STAGEBENCH_KAFKA_PROPERTIES: {properties}: line 2, column 18: byte 0xc3 is "
        "not UTF-8 (save the file as UTF-8)"
    ]


def test_a_replay_file_that_is_not_utf8_is_refused_before_anything_starts(tmp_path):
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(b'{"location_id": "\xff"}\n')
    config = tmp_path / "bench.toml"
    config.write_text(f'[publisher]\nfrom_file = "{replay}"\n')
    results = tmp_path / "results"
    line = f"ERROR: {replay}: line 1, column 18: byte 0xff is not UTF-8 (save the file as UTF-8)"
    # 127.0.0.1:1 answers nothing: reaching for it would be a 10 s timeout and exit 1
    for command in (
        ["run", "--stage", "floor", "--config", str(config), "--results", str(results)],
        ["publish", "--from-file", str(replay)],
    ):
        done = stagebench(*command, "--bootstrap", "127.0.0.1:1")
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [line]
    assert not list(results.iterdir())


def test_a_corrupt_latencies_file_beside_a_valid_summary_is_one_line(tmp_path):
    run_dir = make_run(tmp_path, "ingest", "00000001")
    parquet = run_dir / "latencies.parquet"
    parquet.write_bytes(parquet.read_bytes()[:100])  # cut short, as by a full disk
    done = stagebench("report", str(run_dir))
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"ERROR: {parquet} cannot be read as a run's latencies (")
    assert line.endswith("); stagebench evaluate --force writes it again from the run's topics")
