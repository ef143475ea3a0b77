"""Pure parts of runs and suites: configuration layering, aggregation, drain detection."""

import json
import struct
import time

import pytest

from engines.registry import chosen
from engines.spark.settings import SparkSettings
from ground.config import from_mapping
from ground.errors import ConfigError, FileError
from ground.jvm.heap import MAGIC, JvmCounters, from_counters, read_counters
from ground.kafka.naming import RunTopics
from stagebench.config.layers import CLI, DEFAULT, effective, load
from stagebench.config.roles import assemble, validate
from stagebench.config.settings import RunConfig
from stagebench.report.summary_table import format_runs
from stagebench.resources.summary import summarise
from stagebench.run.job import drained
from stagebench.run.warmup import Warmth, turns
from tests.evaluator.summaries import made_summary


def test_layers_default_file_cli_with_sources(tmp_path):
    path = tmp_path / "bench.toml"
    path.write_text("[run]\nrate = 1000\nduration_s = 30\n[publisher]\nseed = 7\n")
    settings = load(path, {"run": {"rate": 250.0}})
    assert settings.section("run") == {"rate": 250.0, "duration_s": 30}
    assert settings.sources["run"] == {"rate": CLI, "duration_s": f"file {path}"}
    rows = {(s, k): (v, src) for s, k, v, src in effective(settings)}
    assert rows[("publisher", "seed")] == (7, f"file {path}")
    assert rows[("engine.spark", "master")] == ("local[2]", DEFAULT)
    assert rows[("publisher", "rate")][1] == "from [run] rate"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[runn]\nrate = 1\n", r"unknown table \[runn\]"),
        ("[run]\nrat = 1\n", r"unknown key \[run\] rat"),
        (
            "[publisher]\nrate = 1\n",
            r"\[publisher\] rate cannot be set: it comes from \[run\] rate",
        ),
        ("[pipeline]\noutput_topic = 'x'\n", "comes from the run's fresh topics"),
        ("[run]\nrate = \n", "not valid TOML"),
        ("[engine.flonk]\nparallelism = 1\n", r"unknown table \[engine.flonk\]"),
        ("[engine]\nspark = 1\n", r"\[engine.spark\] in file .* must be a table"),
        ("[engine.spark]\nshuffle = 1\n", r"unknown key \[engine.spark\] shuffle"),
        # where runs made before engines had tables kept Spark's settings
        (
            "[pipeline]\nshuffle_partitions = 2\n",
            r"\[pipeline\] shuffle_partitions in file "
            r".* is now \[engine.spark\] shuffle_partitions",
        ),
        ("[run]\nmaster = 'local'\n", r"\[run\] master in file .* is now \[engine.spark\] master"),
    ],
)
def test_bad_config_files_are_errors(tmp_path, toml, message):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=message):
        load(path, {})


def test_an_engines_table_reaches_its_runs_and_config_json(tmp_path):
    path = tmp_path / "bench.toml"
    path.write_text("[engine.spark]\nshuffle_partitions = 3\nspark_conf = { 'spark.a' = '1' }\n")
    settings = load(path, {"engine.spark": {"master": "local[4]"}})
    topics = RunTopics.for_run("r1")
    run = RunConfig(stage="join")
    roles = assemble(run, settings, "host:1", "r1", tmp_path / "r1", topics)
    assert roles.pipeline.settings == SparkSettings(
        master="local[4]", shuffle_partitions=3, spark_conf={"spark.a": "1"}
    )
    doc = roles.effective(run, settings)
    assert "settings" not in doc["pipeline"]
    assert doc["engine.spark"]["shuffle_partitions"] == 3
    assert doc["sources"]["engine.spark"] == {
        "shuffle_partitions": f"file {path}", "spark_conf": f"file {path}", "master": CLI,
    }  # fmt: skip
    floor = RunConfig(stage="floor")
    floor_roles = assemble(floor, settings, "host:1", "r1", tmp_path / "r2", topics)
    assert floor_roles.pipeline.settings is None
    assert "engine.spark" not in floor_roles.effective(floor, settings)


def test_a_jobs_command_makes_the_command_engine_run_the_stage_job(tmp_path):
    given = load(None, {"engine.command": {"job": "python my_job.py"}, "run": {}})
    run = from_mapping(RunConfig, given.section("run"), "run")
    assert (run.engine, run.stage) == ("command", "job")
    assert given.sources["run"]["stage"] == f"{CLI} (a job's command given)"
    declared = load(None, {"engine.command": {"job": "x"}, "run": {"stage": "join"}})
    assert declared.section("run") == {"stage": "join", "engine": "command"}
    path = tmp_path / "bench.toml"
    path.write_text("[engine.command]\njob = 'x'\n")
    with pytest.raises(ConfigError, match=r"runs as the engine command, not flink \(command"):
        load(path, {"run": {"engine": "flink"}})
    with pytest.raises(ConfigError, match="give its command with --job"):
        validate(RunConfig(stage="job"), load(None, {}))


def test_worker_loss_needs_a_standalone_master_before_anything_starts():
    with pytest.raises(ConfigError, match="worker-loss kills an executor of a standalone"):
        validate(RunConfig(stage="join", fault="worker-loss"), load(None, {}))
    cluster = load(None, {"engine.spark": {"master": "spark://h:7077"}})
    validate(RunConfig(stage="join", fault="worker-loss"), cluster)


def test_missing_config_file(tmp_path):
    with pytest.raises(FileError, match=r"nope\.toml: not found"):
        load(tmp_path / "nope.toml", {})


def test_a_jvm_stage_warms_up_at_least_its_engines_minimum_the_floor_not():
    assert RunConfig(stage="join", warmup_min_s=120).shortest_warmup_s == 120
    assert RunConfig(stage="join", warmup_max_s=60).shortest_warmup_s == 60
    assert RunConfig(stage="floor").shortest_warmup_s == 0
    assert RunConfig(stage="floor", warmup_min_s=120).shortest_warmup_s == 0
    for engine in ("spark", "flink", "kafka-streams"):
        own = chosen(engine, "join").warmup_min_s
        assert own > 0
        assert RunConfig(stage="join", engine=engine).shortest_warmup_s == own


def test_the_application_warms_up_each_stage_once_the_deepest_first():
    entries = [("ingest", "builtin"), ("tumbling-union", "builtin"), ("tumbling", "custom"),
               ("join", "builtin"), ("tumbling", "builtin"), ("ingest", "builtin")]  # fmt: skip
    runs = [(RunConfig(stage=name, impl=impl), None) for name, impl in entries]
    # tumbling-union builds on parse, not the join: shallower than the join
    assert [(run.stage, run.impl) for run, _ in turns(runs)] == [
        ("tumbling", "custom"),
        ("tumbling", "builtin"),
        ("join", "builtin"),
        ("tumbling-union", "builtin"),
        ("ingest", "builtin"),
    ]


class _App:
    """A suite's application as a run sees it: running, taking its settings or not."""

    def __init__(self, running=True, accepts=True):
        self.running, self._accepts = running, accepts
        self.warmed_up, self.age_s = {"stages": ["join/builtin"]}, 100.0

    def accepts(self, pipeline):
        return self._accepts


COLD = RunConfig(stage="join")
WARM = (0.0, COLD.warm_settle_window_s)
LONG = (COLD.shortest_warmup_s, COLD.settle_window_s)


@pytest.mark.parametrize(
    ("run", "app", "shared", "settling"),
    [
        # a query of the warmed-up application settles with short windows, no minimum
        (COLD, _App(), True, WARM),
        # the floor runs no Spark: after the application's warm-up it settles as fast
        (RunConfig(stage="floor"), _App(), False, WARM),
        # outside a suite the broker may be as new as a Spark job's JVM: the long windows
        (RunConfig(stage="floor"), None, False, (0.0, COLD.settle_window_s)),
        # a Spark job of its own starts a cold JVM: the long rule
        (RunConfig(stage="join", fault="broker-restart"), _App(), False, LONG),
        (COLD, _App(accepts=False), False, LONG),
        (COLD, _App(running=False), False, LONG),
        (COLD, None, False, LONG),
    ],
    ids=["shared", "floor", "floor-no-suite", "fault", "other-settings", "stopped", "no-suite"],
)
def test_a_run_uses_the_warmed_up_application_only_when_it_can(run, app, shared, settling):
    warmth = Warmth.of(run, None, app)
    assert warmth.application is (app if shared else None)
    assert warmth.settling(run) == settling
    # the record, at the warm-up's start: the application's age then
    record = warmth.record(warm_up_began=time.monotonic() - 30)
    if app is None:
        assert record == {}
    else:
        assert record["application"]["shared"] is shared
        assert record["application"]["warmed_up"] == app.warmed_up
        if shared:
            assert record["application"]["age_s"] == pytest.approx(70, abs=1)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"stage": "window"}, "unknown stage 'window'"),
        ({"workload": "soak"}, "unknown workload 'soak'"),
        ({"rate": 0}, "rate must be > 0"),
        ({"warmup_s": -1}, "warmup must be auto or seconds"),
        ({"warmup_s": "soon"}, "warmup must be auto or seconds"),
        ({"settle_window_s": 400}, "settle_window_s must be"),
        ({"lead_in_s": -5}, "lead_in_s must be >= 0"),
        ({"warmup_min_s": -1}, "warmup_min_s must be >= 0"),
        ({"fault": "flood"}, "fault must be one of"),
        (
            {"stage": "join", "engine": "floor"},
            "floor does not run stage 'join'",
        ),
        (
            {"engine": "flonk"},
            r"unknown engine 'flonk' \(engines: floor, spark, flink, kafka-streams, command\)",
        ),
        ({"fault": "broker-kill", "fault_at_s": 60}, "fault_at_s must be within"),
        ({"fault": "broker-kill", "fault_down_s": 0}, "fault_down_s must be > 0"),
        (
            {"stage": "floor", "fault": "engine-restart"},
            "engine-restart is a fault of an engine's job, and the floor takes none",
        ),
        ({"stage": "floor", "fault": "worker-loss"}, "worker-loss is a fault of an engine's job"),
    ],
)
def test_run_config_validation(values, message):
    with pytest.raises(ConfigError, match=message):
        from_mapping(RunConfig, values, "run")


def _events(tmp_path, events):
    path = tmp_path / "engine_progress.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_drained_needs_two_empty_batches_after_the_input_stopped(tmp_path):
    busy = {"event": "progress", "time_ms": 2000, "numInputRows": 5}
    empty = {"event": "progress", "time_ms": 2100, "numInputRows": 0}
    old_empty = {**empty, "time_ms": 900}
    assert not drained(tmp_path / "missing.jsonl", 1000)
    assert not drained(_events(tmp_path, [old_empty, old_empty, busy, empty]), 1000)
    assert drained(_events(tmp_path, [busy, empty, empty]), 1000)
    assert drained(_events(tmp_path, [busy, {"event": "idle", "time_ms": 2200}]), 1000)


def test_resource_summary_per_process():
    def sample(process, cpu, rss, heap, gc=None):
        return {"time_ms": 1, "process": process, "cpu_percent": cpu, "rss_mb": rss,
                "heap_used_mb": heap, "gc_ms_per_s": gc}  # fmt: skip

    samples = [
        sample("engine", 50.0, 100.0, None),
        sample("engine", 150.0, 300.0, 80.0, gc=12.5),
        sample("broker", 10.0, 400.0, 200.0),
    ]
    out = summarise(samples)
    assert out["engine"] == {
        "samples": 2,
        "cpu_percent_mean": 100.0, "cpu_percent_max": 150.0,
        "rss_mb_mean": 200.0, "rss_mb_max": 300.0,
        "heap_used_mb_mean": 80.0, "heap_used_mb_max": 80.0,
        "gc_ms_per_s_mean": 12.5, "gc_ms_per_s_max": 12.5,
        "thread_max_pct_mean": None, "thread_max_pct_max": None, "thread_max_name": None,
    }  # fmt: skip
    assert out["broker"]["samples"] == 1


def _perf_buffer(counters: dict[str, int]) -> bytes:
    """A little-endian hsperfdata buffer with long counters, as HotSpot lays it out."""
    entries = b""
    for name, value in counters.items():
        raw = name.encode() + b"\0"
        raw += b"\0" * (-len(raw) % 8)
        name_offset, data_offset = 20 + 4, 20 + 4 + len(raw)
        body = struct.pack("<iiibbbbi", 20 + 4 + len(raw) + 8, name_offset, 0, ord("J"), 0, 0, 0,
                           data_offset) + b"\0" * 4 + raw + struct.pack("<q", value)  # fmt: skip
        entries += body
    prologue = struct.pack(">I", MAGIC) + struct.pack(
        "<bbbbiiqII", 1, 2, 0, 1, 0, 0, 0, 32, len(counters)
    )
    return prologue + entries


def test_read_counters_parses_long_counters():
    buf = _perf_buffer({"sun.gc.generation.0.space.0.used": 1234, "java.threads.live": 42})
    assert read_counters(buf) == {"sun.gc.generation.0.space.0.used": 1234, "java.threads.live": 42}
    with pytest.raises(ValueError):
        read_counters(b"\0" * 64)


def test_jvm_counters_sum_the_heap_spaces_and_the_collectors_time():
    counters = {
        "sun.gc.generation.0.space.0.used": 1000, "sun.gc.generation.1.space.0.used": 24,
        "sun.gc.collector.0.time": 3_000_000, "sun.gc.collector.1.time": 1_500_000,
        "sun.gc.collector.0.invocations": 7, "sun.os.hrt.frequency": 1_000_000_000,
    }  # fmt: skip
    assert from_counters(counters) == JvmCounters(heap_used=1024, gc_s=0.0045)
    # no tick rate: the time is unknown, the heap is not
    without = {k: v for k, v in counters.items() if k != "sun.os.hrt.frequency"}
    assert from_counters(without) == JvmCounters(heap_used=1024, gc_s=None)
    assert from_counters({"sun.gc.collector.0.time": 5, "sun.os.hrt.frequency": 10}) is None


def test_summary_table_shows_latency_completeness_and_warnings():
    summary = made_summary(
        run={"stage": "join", "impl": "builtin"},
        records={"outputs": 1200, "missing": 0, "duplicates": 0},
        latency_ms={"p50": 101.5, "p95": 150.0, "p99": 210.25, "max": 400.0},
        warnings=["publisher fell behind"],
    )
    text = format_runs([summary])
    assert "join" in text and "1,200" in text and " 102 " in text and " 210 " in text
    assert text.splitlines()[-1].startswith("WARNING: publisher fell behind (in full: ")


def test_a_run_names_its_engine_and_the_floor_runs_as_the_floor():
    assert (
        from_mapping(RunConfig, {"stage": "join", "engine": "spark"}, "run").runs_on().name
        == "spark"
    )
    floor = from_mapping(RunConfig, {"stage": "floor", "engine": "spark"}, "run")
    assert floor.runs_on().name == "floor" and floor.shortest_warmup_s == 0.0
