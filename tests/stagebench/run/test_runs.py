"""Complete runs and suites against a real broker, through the real CLI."""

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from evaluator.statistics.confidence import MIN_SECTION_S
from ground.jvm.heap import jvm_counters
from ground.jvm.java import java_executable
from ground.kafka.local import local_broker
from stagebench.resources.sampler import ResourceSampler

pytestmark = pytest.mark.integration  # those that start a Spark job are marked spark

SHORT = ["--rate", "400", "--duration", "20", "--warmup", "5", "--tail", "5"]
SHARED = ["--app-warmup", "5"]
"""A suite's shared application, warmed up for a few seconds only."""


def stagebench(*args, env_extra=None, timeout=900) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    env.pop("STAGEBENCH_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "stagebench", *args],
        capture_output=True, text=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def assert_complete_run(
    run_dir: Path, stage: str, bootstrap: str, impl: str = "builtin", rate: float | None = 400
) -> dict:
    """The checks every complete run passes; ``rate``: the offered rate the inputs of the
    measured period must show (None: not checked, for a box too loaded to keep it)."""
    for name in ("config.json", "run.json", "publisher.json", "engine_progress.jsonl",
                 "resources.csv", "latencies.parquet", "timeseries.csv", "report.md",
                 "report.html", "status.json"):  # fmt: skip
        assert (run_dir / name).exists(), f"{run_dir} lacks {name}"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["run"]["stage"], summary["run"]["impl"]) == (stage, impl)
    assert summary["latency_ms"]["count"] > 0
    # one broker clock in whole ms: the floor's round trip can take under 1 ms (p50 0)
    assert summary["latency_ms"]["p50"] >= (0 if stage == "floor" else 1)
    records = summary["records"]
    assert records["missing"] == 0, records
    assert records["duplicates"] == 0 and records["negative"] == 0, records
    assert records["unexpected"] == 0 and records["malformed_outputs"] == 0, records
    assert records["input_ts_mismatch"] == 0, records  # the job carried the broker's clock
    for key in ("input_ts_earliest_mismatch", "input_count_mismatch", "wrong_values"):
        assert records[key] == 0, (key, summary["wrong"])
    assert summary["trusted"] is True and summary["wrong"] == {}, summary["wrong"]
    assert 0 < records["expected"] <= records["outputs"], records
    publisher = json.loads((run_dir / "publisher.json").read_text())
    assert publisher["undelivered"] == publisher["delivery_errors"] == 0, publisher
    assert records["inputs"] == publisher["delivered"], (records, publisher["delivered"])
    if rate is not None:
        assert summary["throughput"]["input_mps"] == pytest.approx(rate, rel=0.1)
    usage = summary["metadata"]["resources"]
    assert usage["engine"]["samples"] > 10 and usage["engine"]["cpu_percent_mean"] > 0
    # a broker on this machine, embedded or in a container, is sampled as the broker
    if broker := local_broker(bootstrap):
        assert usage["broker"]["rss_mb_max"] > 100
        assert summary["machine"]["broker"]["kind"] == broker.kind
    # the versions of the engine that ran it, and no other engine's (none is loaded for them)
    release = {"spark": "pyspark", "flink": "apache-flink", "kafka-streams": "kafka_streams"}
    engine = summary["run"]["engine"]
    if engine in release:
        assert summary["versions"][release[engine]][0].isdigit()
    assert not set(summary["versions"]) & {v for k, v in release.items() if k != engine}
    assert json.loads((run_dir / "status.json").read_text())["state"] == "complete"
    assert summary["warmup"]["mode"] == "fixed" and summary["warmup"]["seconds"] == 5
    steady = summary["steady_state"]
    if steady is None:  # under 5 seconds with outputs (a saturated box's slow batches): said
        assert any("too few measured seconds" in w for w in summary["warnings"])
    else:
        assert steady["verdict"] in ("steady", "rising", "falling", "undetermined")
    if summary["confidence"] is not None:
        lo, hi = summary["confidence"]["p50"]
        assert lo <= summary["latency_ms"]["p50"] <= hi
    else:  # too few seconds with outputs for 4 sections (a window stage, a saturated box)
        assert steady is None or steady["seconds"] < 4 * MIN_SECTION_S, steady
    assert summary["machine"]["cores"] >= 1 and summary["machine"]["samples"] > 10
    pace = summary["machine"]["pace"]  # the host's pace, before the job and after it
    assert pace["before_ms"] > 0 and pace["after_ms"] > 0, pace
    assert usage["bench"]["cpu_percent_mean"] > 0  # the publisher's process is sampled
    return summary


@pytest.mark.slow
@pytest.mark.spark
def test_suite_runs_the_ladder_and_orders_the_stages(kafka_bootstrap, tmp_path):
    # the floor and ingest: the join runs whole in the fault, malformed-input, NDW and
    # compose tests, the windows in test_run_custom_sliding and the pipeline tests
    result = stagebench(
        "suite", "--stages", "ingest", "--engine", "spark", *SHORT, *SHARED,
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    suite_dir = next(tmp_path.glob("*-suite-*"))
    comparison = json.loads((suite_dir / "comparison.json").read_text())
    rows = comparison["stages"]
    assert [r["stage"] for r in rows] == ["floor", "ingest"]  # the floor comes first
    assert [r["engine"] for r in rows] == ["floor", "spark"]  # the floor stays the floor
    summaries = {
        row["stage"]: assert_complete_run(Path(row["run_dir"]), row["stage"], kafka_bootstrap)
        for row in rows
    }
    # ingest ran in the suite's application, warmed up before it; the floor after it
    warmed_up = comparison["application"]
    assert warmed_up["stages"] == ["ingest/builtin"] and warmed_up["rate"] == 400
    ingest = summaries["ingest"]["warmup"]["application"]
    assert ingest["shared"] is True and ingest["warmed_up"] == warmed_up
    assert ingest["age_s"] >= warmed_up["took_s"] >= warmed_up["seconds"]
    assert summaries["floor"]["warmup"]["application"]["shared"] is False
    assert not (Path(rows[1]["run_dir"]) / "pipeline.log").exists()  # no job of its own
    app_log = (suite_dir / "application" / "application.log").read_text()
    assert "query" in app_log and "started" in app_log
    p50 = {r["stage"]: r["p50"] for r in rows}
    assert p50["floor"] < p50["ingest"], p50
    assert rows[1]["increment_over"] == "floor/builtin"
    assert rows[1]["increment_p50"] == pytest.approx(p50["ingest"] - p50["floor"])
    assert rows[1]["run_rounds"] == [1] and comparison["order"]["rounds"][0]
    assert comparison["differences"] == [] and comparison["failed"] == []
    assert all(r["pace_ms"] > 0 for r in rows) and comparison["pace_spread"] >= 0
    assert (suite_dir / "comparison.md").read_text().count("| ") > 5
    assert not list(suite_dir.glob("*.png"))
    assert "+p50" in result.stdout and "ingest" in result.stdout
    # report.html: the suite's page with its numbers, its size stated; each run has its own
    page = (suite_dir / "report.html").read_text()
    for row in rows:
        assert f'data-stage="{row["stage"]}" data-stat="p50" data-value="{row["p50"]!r}"' in page
        assert (Path(row["run_dir"]) / "report.html").is_file()
        assert (Path(row["run_dir"]) / "latencies.hlog").is_file()
    assert (suite_dir / "report.html").stat().st_size < 10e6
    assert "report: " in result.stdout and "MB, written in" in result.stdout
    # the suite's directory compares as the suite did
    again = stagebench("compare", str(suite_dir))
    assert again.returncode == 0 and "ingest" in again.stdout, again.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.spark
def test_suite_runs_a_window_at_every_update_in_both_modes(kafka_bootstrap, tmp_path):
    """tumbling-union in micro-batches and in real-time mode, one suite: each complete and
    checked, its first updates and complete windows reported, the modes kept apart.
    local[4]: real-time mode runs its 2 input and 2 shuffle tasks at once."""
    config = tmp_path / "stagebench.toml"  # 2 shuffle partitions whatever the cores
    config.write_text("[engine.spark]\nshuffle_partitions = 2\n")
    result = stagebench(
        "suite", "--stages", "tumbling-union,tumbling-union@real-time", "--no-floor", *SHORT,
        *SHARED,
        "--master", "local[4]", "--config", str(config), "--bootstrap", kafka_bootstrap,
        "--results", str(tmp_path / "results"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    suite_dir = next((tmp_path / "results").glob("*-suite-*"))
    rows = json.loads((suite_dir / "comparison.json").read_text())["stages"]
    assert {(r["stage"], r["impl"]) for r in rows} == {
        ("tumbling-union", "builtin"), ("tumbling-union", "builtin@real-time")
    }  # fmt: skip
    for row in rows:
        summary = assert_complete_run(Path(row["run_dir"]), "tumbling-union", kafka_bootstrap)
        trigger = "real-time" if row["impl"].endswith("@real-time") else "processing-time"
        assert summary["config"]["pipeline"]["trigger"] == trigger
        # real-time mode needs every task slot: a job of its own, beside the application
        shared = summary["warmup"].get("application", {}).get("shared")
        assert shared is (trigger == "processing-time"), summary["warmup"]
        updates = summary["updates"]
        assert updates["complete"] == updates["windows"] == summary["records"]["expected"]
        assert updates["first_carried_outside"] == 0 and updates["never_complete"] == 0
        assert row["first_update_p50"] == updates["first_update_ms"]["p50"]
        assert row["updates_per_window"] >= 1
    assert "first update p50" in result.stdout  # the compact table names it too


@pytest.mark.slow
@pytest.mark.spark
def test_run_custom_sliding(kafka_bootstrap, tmp_path):
    result = stagebench(
        "run", "--stage", "sliding", "--impl", "custom", *SHORT,
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = Path(result.stdout.strip().splitlines()[-1].removeprefix("results: "))
    summary = assert_complete_run(run_dir, "sliding", kafka_bootstrap, "custom")
    assert "p99 ms" in result.stdout
    # evaluating the run again, with the run's own settings, gives the same numbers
    again = stagebench("evaluate", str(run_dir), "--out", str(tmp_path / "again"),
                       "--bootstrap", kafka_bootstrap)  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    second = json.loads((tmp_path / "again" / "summary.json").read_text())
    for key in ("period", "latency_ms", "latency_earliest_ms", "records", "wrong", "trusted",
                "throughput", "steady_state", "confidence", "config"):  # fmt: skip
        assert second[key] == summary[key], key
    assert (tmp_path / "again" / "timeseries.csv").read_bytes() == (
        run_dir / "timeseries.csv"
    ).read_bytes()
    # the same rows (the order two partitions are read in may differ)
    first, then = (
        pd.read_parquet(d / "latencies.parquet").sort_values(["partition", "offset"])
        .reset_index(drop=True)
        for d in (run_dir, tmp_path / "again")
    )  # fmt: skip
    pd.testing.assert_frame_equal(first, then)


@pytest.mark.slow
def test_broker_dying_mid_run_is_a_clear_error_and_keeps_what_was_collected(tmp_path):
    # the runner's health check, not the job's: the floor (no JVM) is job enough
    from ground.kafka.broker import EmbeddedBroker

    broker = EmbeddedBroker(home=tmp_path / "broker")
    state = broker.start()
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stagebench", "run", "--stage", "floor", "--duration", "60",
         "--bootstrap", state.bootstrap, "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(results.glob("*/pipeline.ready")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the job never became ready"
            time.sleep(0.5)
        time.sleep(5)  # let some records flow
        os.kill(state.nodes[0].pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
        broker.stop()
    assert proc.returncode == 1
    assert stderr.strip().splitlines()[-1] == (
        f"ERROR: Kafka at {state.bootstrap} stopped answering during the run"
    )
    run_dir = next(results.iterdir())
    status = json.loads((run_dir / "status.json").read_text())
    assert status["state"] == "failed" and "stopped answering" in status["error"]
    assert (run_dir / "config.json").exists()
    assert (run_dir / "engine_progress.jsonl").stat().st_size > 0
    assert len((run_dir / "resources.csv").read_text().splitlines()) > 3


def test_resource_sampler_reads_a_live_jvm_heap_and_its_collections(tmp_path):
    source = tmp_path / "Collect.java"
    source.write_text(
        "public class Collect { public static void main(String[] a) throws Exception {"
        " byte[][] keep = new byte[64][]; for (int i = 0; i < 64; i++) keep[i] = new byte[1<<20];"
        " for (int i = 0; i < 600; i++) { System.gc(); Thread.sleep(100); } } }"
    )
    jvm = subprocess.Popen([java_executable(), str(source)])
    try:
        deadline = time.monotonic() + 30
        while jvm_counters(jvm.pid) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)  # past the allocation
        sampler = ResourceSampler({"jvm": lambda: [jvm.pid]}, interval_s=0.3).start()
        time.sleep(1.5)
        samples = sampler.stop()
    finally:
        jvm.kill()
        jvm.wait()
    samples = [s for s in samples if s["process"] == "jvm"]
    assert samples
    assert max(s["heap_used_mb"] for s in samples) >= 64
    assert max(s["rss_mb"] for s in samples) >= 64
    # the first round has no earlier collector time to take a difference from
    assert samples[0]["gc_ms_per_s"] is None
    assert max(s["gc_ms_per_s"] or 0 for s in samples) > 0  # ten full collections a second


@pytest.mark.slow
@pytest.mark.spark
def test_an_overloaded_stage_is_rising_and_a_busy_machine_is_named(kafka_bootstrap, tmp_path):
    # the job takes at most 20 records per 1 s batch while 40 msg/s arrive: its backlog,
    # and so its latency, grows through the whole run, by at least a second each second of
    # input (more when a loaded box takes longer than the trigger per batch). Small batches
    # cost the same whatever the box, so the rise is a clean line: the measured period's
    # inputs (5 to 20 s after the publisher's start) reach outputs from 10 s on until the
    # job is stopped 25 s after that start (5 s warm-up + 15 s + 5 s drain; ingest has no
    # windows, so no tail), a rise of several seconds over a median of about 10
    config = tmp_path / "slow.toml"
    config.write_text(
        "[run]\ndrain_timeout_s = 5\n"
        "[engine.spark]\nmax_offsets_per_trigger = 20\ntrigger_interval_ms = 1000\n"
    )
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        result = stagebench(
            "run", "--stage", "ingest", "--rate", "40", "--duration", "15", "--warmup", "5",
            "--config", str(config), "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
        )  # fmt: skip
    finally:
        busy.kill()
        busy.wait()
    summary = json.loads(next(tmp_path.glob("*-ingest-*/summary.json")).read_text())
    assert summary["steady_state"]["verdict"] == "rising", summary["steady_state"]
    assert any("not steady" in w and "overloaded" in w for w in summary["warnings"])
    assert summary["machine"]["cpu_outside_run_pct_mean"] > 50
    assert any("other processes used" in w for w in summary["warnings"])
    assert "WARNING" in result.stdout + result.stderr


def test_auto_warm_up_ends_once_the_live_latency_has_settled(kafka_bootstrap, tmp_path):
    # the floor (no JVM: no minimum) settles once its three 5 s windows are there; the
    # default run's own path
    config = tmp_path / "auto.toml"
    config.write_text("[run]\nsettle_window_s = 5\nwarmup_max_s = 60\n")
    result = stagebench(
        "run", "--stage", "floor", "--duration", "5", "--warmup", "auto", "--config",
        str(config), "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(next(tmp_path.glob("*-floor-*/summary.json")).read_text())
    warmup = summary["warmup"]
    assert (warmup["mode"], warmup["settled"], warmup["min_s"]) == ("auto", True, 0), warmup
    assert 15 <= warmup["seconds"] < 60, warmup
    assert "warm-up over after" in result.stdout + result.stderr
    assert summary["records"]["missing"] == 0 and summary["latency_ms"]["count"] > 0


@pytest.mark.slow
@pytest.mark.spark
def test_a_run_without_warm_up_measures_the_start_up(kafka_bootstrap, tmp_path):
    result = stagebench(
        "run", "--stage", "ingest", "--duration", "15", "--warmup", "0",
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next(tmp_path.glob("*-ingest-*"))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert any("no warm-up" in w for w in summary["warnings"])
    # the fresh job's first batches (planning, code generation, a cold JIT) are measured
    series = pd.read_csv(run_dir / "timeseries.csv").dropna(subset=["latency_p50_ms"])
    first = series["latency_p50_ms"].head(3).max()
    assert first > series["latency_p50_ms"].median(), series.head(10)
    # how short a decay is, and how noisy the box, decides the verdict: whichever it is,
    # the warning says what it means
    steady = summary["steady_state"]
    said = {
        "falling": "still warming up", "rising": "overloaded", "steady": "",
        "undetermined": "steadiness not shown",
    }[steady["verdict"]]  # fmt: skip
    flagged = [w for w in summary["warnings"] if "stead" in w]
    assert all(said in w for w in flagged) and bool(flagged) == bool(said), summary["warnings"]


@pytest.mark.slow
@pytest.mark.spark
def test_a_periodic_burst_run_reports_the_recovery_after_each_burst(kafka_bootstrap, tmp_path):
    # bursts every 10 s of the schedule (10, 20, 30, …): after 15 s of warm-up, 20 s of
    # measuring hold those at 20 and 30 s. The first, in the warm-up, still needs a
    # baseline: 5 seconds with outputs before it, though a loaded box's job wrote its
    # first outputs 3 s after the publisher's start (bursts at 7 s left it 4)
    config = tmp_path / "bursts.toml"
    config.write_text(
        "[publisher]\nburst_messages = 2000\nburst_every_s = 10\nburst_duration_s = 0.5\n"
    )
    results = tmp_path / "results"
    try:
        result = stagebench(
            "run", "--stage", "ingest", "--workload", "periodic-burst", "--rate", "400",
            "--duration", "20", "--warmup", "15", "--tail", "5", "--config", str(config),
            "--bootstrap", kafka_bootstrap, "--results", str(results),
        )  # fmt: skip
    finally:
        assert not _job_pids(results), "the job outlived its run"
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next(results.glob("*-ingest-*"))
    summary = json.loads((run_dir / "summary.json").read_text())
    period, recovery = summary["period"], summary["recovery"]
    windows = recovery["windows"]
    starts = [w["start_ms"] for w in windows]
    assert len(windows) >= 2, recovery
    # every burst of the measured period, and only those: 10 s apart, none missing at either end
    assert all(period["measured_from_ms"] <= s <= period["measured_to_ms"] for s in starts)
    assert [b - a for a, b in itertools.pairwise(starts)] == [10_000] * (len(starts) - 1)
    assert starts[0] - period["measured_from_ms"] < 10_000
    assert period["measured_to_ms"] - starts[-1] < 10_000
    for w in windows:
        assert (w["kind"], w["end_ms"] - w["start_ms"]) == ("burst", 500)
        assert w["baseline_p50_ms"] > 0 and w["peak_ms"] > 0, w
        assert w["first_output_after_s"] is not None, w
    recovered = [w for w in windows if w["recovered"]]
    assert recovered and all(w["recovery_s"] >= 0 for w in recovered), windows
    assert recovery["summary"]["windows"] == len(windows)
    assert recovery["summary"]["recovery_s_max"] is not None
    assert (recovery["baseline_window_s"], recovery["threshold"]) == (20.0, 0.2)
    # the bursts reached the broker where the windows say: 400 msg/s plus 2 000 in a burst
    inputs = pd.read_csv(run_dir / "timeseries.csv").set_index("second")["input_count"]
    for s in starts:
        assert inputs.loc[s // 1000 : s // 1000 + 1].sum() >= 2000, (s, inputs)
    assert "## Recovery after each disturbance" in (run_dir / "report.md").read_text()


JOB_MODULES = ("engines.spark.job", "engines.floor.loop", "engines.spark.server")
"""The job process of a run (the Spark pipeline, or the floor) and a suite's shared
application."""


def _job_pids(results: Path) -> list[int]:
    """Pids of the job processes (Spark or the floor) started for runs under ``results``."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(p.info["cmdline"] or [])
        if any(module in cmdline for module in JOB_MODULES) and str(results) in cmdline:
            found.append(p.pid)
    return found


@pytest.mark.parametrize(
    ("signum", "stage"),
    [
        # SIGTERM and SIGHUP: the runner catches them and stops the job itself, the same
        # for every job; the floor (no JVM) shows it in seconds
        pytest.param(signal.SIGTERM, "floor", id="SIGTERM-floor"),
        pytest.param(signal.SIGHUP, "floor", id="SIGHUP-floor"),
        # SIGKILL: nobody stops the job, nor SIGKILLs it after a timeout; the Spark job must
        # notice through its stdin pipe and end by itself, stopping its query and session
        # (the floor shares the pipe's watch, engines.process, not the Spark shutdown)
        pytest.param(
            signal.SIGKILL,
            "ingest",
            marks=[pytest.mark.spark, pytest.mark.slow],
            id="SIGKILL-ingest",
        ),
    ],
)
def test_a_job_never_outlives_its_runner(kafka_bootstrap, tmp_path, signum, stage):
    results = tmp_path / "results"
    args = ["run", "--stage", stage, "--duration", "120"]
    _signal_when_running(args, kafka_bootstrap, results, "*/pipeline.ready", signum, 60)
    if signum != signal.SIGKILL:
        status = json.loads(next(results.glob("*/status.json")).read_text())
        assert status["state"] == "interrupted"


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_suites_shared_application_never_outlives_the_suite(kafka_bootstrap, tmp_path, signum):
    """SIGTERM: the suite closes the application in order; SIGKILL: the application sees
    its standard input close and stops its queries and its session by itself."""
    args = ["suite", "--stages", "ingest", "--no-floor", "--app-warmup", "120"]
    # signalled while the warm-up's query runs
    ready = "*/application/warmup-*/*/pipeline.ready"
    _signal_when_running(args, kafka_bootstrap, tmp_path / "results", ready, signum, 90)


def _signal_when_running(
    args: list[str],
    bootstrap: str,
    results: Path,
    ready: str,
    signum: signal.Signals,
    grace_s: float,
) -> None:
    """Start ``stagebench ARGS``, send it ``signum`` once a file matching ``ready`` exists
    under ``results``, and assert that no job it started is left ``grace_s`` after it
    ended (killing any that is)."""
    bench = subprocess.Popen(
        [sys.executable, "-m", "stagebench", *args, "--bootstrap", bootstrap,
         "--results", str(results)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(results.glob(ready)):
            assert bench.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
        assert _job_pids(results)
        bench.send_signal(signum)
        bench.wait(90)
        deadline = time.monotonic() + grace_s
        while _job_pids(results) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _job_pids(results), f"a job outlived stagebench ended by {signum.name}"
    finally:
        if bench.poll() is None:
            bench.kill()
        for pid in _job_pids(results):
            os.killpg(pid, signal.SIGKILL)
