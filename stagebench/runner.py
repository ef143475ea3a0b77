"""One benchmark run of one stage, from fresh topics to summary.json.

The flow (DEVELOPERS.md, SPEC §5): pick the broker → create the run's fresh
LogAppendTime topics and check their leaders → start the pipeline in its own
process and wait until its query runs → publish the workload (single burst:
publish the backlog first, then start the job from the earliest offset) →
mark the end of the measured period in broker time → keep publishing for a
short tail so event-time windows close → wait until the job has drained →
stop it → check the leaders again → evaluate. CPU and memory of the engine and
broker are sampled throughout. Whatever happens, the run directory keeps what
was collected; a failed or interrupted run says so in ``status.json``.
"""

import csv
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from stagebench import KAFKA_VERSION, resources
from stagebench.config import as_dict, from_mapping, require
from stagebench.console import Console
from stagebench.errors import BrokerError, PublishError, SparkError, StagebenchError
from stagebench.naming import RunTopics, new_run_id
from stagebench.schema import STAGES
from stagebench.settings import Settings

log = logging.getLogger(__name__)

Workload = Literal["latency", "single-burst", "periodic-burst"]
PUBLISHER_SHAPE = {
    "latency": "constant",
    "single-burst": "single-burst",
    "periodic-burst": "periodic-burst",
}
HEALTH_EVERY_S = 2.0
BROKER_FAILURES_TOLERATED = 3
STOP_TIMEOUT_S = 60.0
FAILED_STOP_TIMEOUT_S = 15.0
REAL_TIME_DRAIN_S = 5.0
"""A failed or interrupted run (e.g. the broker died) cannot stop cleanly anyway."""


@dataclass(frozen=True)
class RunConfig:
    """What to run and for how long; the ``[run]`` table of a config file."""

    stage: str = "ingest"
    impl: Literal["builtin", "custom"] = "builtin"
    workload: Workload = "latency"
    rate: float = 400.0
    """Messages per second over both input topics (the base rate of burst workloads)."""
    duration_s: float = 60.0
    """Measured period after the job is running (single burst: after the backlog)."""
    warmup_s: float | None = None
    """Trimmed from the start of the measured period (default: 10 %; single burst: 0)."""
    tail_s: float = 5.0
    """Publishing goes on this long after the measured period so the last windows close."""
    drain_timeout_s: float = 60.0
    ready_timeout_s: float = 300.0
    partitions: int = 1
    bootstrap: str | None = None
    master: str = "local[2]"
    checkpoint_root: str | None = None
    """Where Spark checkpoints go; on a multi-node cluster a path every node reaches
    (e.g. an hdfs:// or s3a:// URI). Default: the run directory."""
    results_dir: str = "results"

    def __post_init__(self) -> None:
        require(self.stage in STAGES, f"unknown stage {self.stage!r} (stages: {', '.join(STAGES)})")
        require(
            self.impl in ("builtin", "custom"), f"impl must be builtin or custom: {self.impl!r}"
        )
        require(
            self.workload in get_args(Workload),
            f"unknown workload {self.workload!r} (workloads: {', '.join(get_args(Workload))})",
        )
        require(self.rate > 0, f"rate must be > 0, got {self.rate}")
        require(self.duration_s > 0, f"duration must be > 0, got {self.duration_s}")
        require(
            self.warmup_s is None or 0 <= self.warmup_s < self.duration_s,
            f"warmup must be >= 0 and shorter than the duration, got {self.warmup_s}",
        )
        require(self.tail_s >= 0, "tail_s must be >= 0")
        require(self.drain_timeout_s > 0 and self.ready_timeout_s > 0, "timeouts must be > 0")
        require(self.partitions >= 1, "partitions must be >= 1")


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    summary: dict[str, Any]


def run_dir_name(stage: str, run_id: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{stage}-{run_id}"


def execute(run: RunConfig, settings: Settings, console: Console | None = None) -> RunResult:
    """Run one stage end to end; the run directory and its summary."""
    from stagebench.bootstrap import resolve

    console = console or Console()
    bootstrap = resolve(run.bootstrap)
    run_id = new_run_id()
    run_dir = Path(run.results_dir) / run_dir_name(run.stage, run_id)
    prepared = Run(run, settings, bootstrap, run_id, run_dir, console)  # validates everything
    run_dir.mkdir(parents=True)
    return prepared.execute()


class Run:
    """The state of one run while it executes; see the module docstring for the flow."""

    def __init__(
        self,
        run: RunConfig,
        settings: Settings,
        bootstrap: str,
        run_id: str,
        run_dir: Path,
        console: Console,
    ):
        from evaluator.config import EvaluatorConfig
        from pipelines.config import PipelineConfig
        from publisher.config import PublisherConfig

        self.run, self.bootstrap, self.run_id, self.dir = run, bootstrap, run_id, run_dir
        self.console = console
        self.topics = RunTopics.for_run(run_id)
        self.settings = settings
        # every configuration is built and validated before anything starts
        self.publisher = from_mapping(PublisherConfig, self._publisher_mapping(), "publisher")
        self.pipeline = from_mapping(
            PipelineConfig,
            {
                **settings.section("pipeline"),
                "stage": run.stage,
                "impl": run.impl,
                "master": run.master,
                "bootstrap": bootstrap,
                "speed_topic": self.topics.speed,
                "flow_topic": self.topics.flow,
                "output_topic": self.topics.output,
                "run_id": run_id,
                "checkpoint_dir": (
                    f"{run.checkpoint_root.rstrip('/')}/{run_dir.name}"
                    if run.checkpoint_root
                    else str(run_dir / "checkpoint")
                ),
            },
            "pipeline",
        )
        warmup = run.warmup_s if run.warmup_s is not None else (
            0.0 if run.workload == "single-burst" else None
        )  # fmt: skip
        self.evaluator = from_mapping(
            EvaluatorConfig,
            {
                **settings.section("evaluator"),
                "warmup_s": warmup,
                "sliding_window_s": self.pipeline.window_length_ms // 1000,
            },
            "evaluator",
        )
        self._check_combination()
        self.broker_pid = _local_broker_pid(bootstrap)
        self.proc: subprocess.Popen | None = None
        self.stop_publishing = threading.Event()
        self.publish_thread: threading.Thread | None = None
        self.publish_result: dict[str, Any] = {}
        self.sampler = resources.ResourceSampler(
            {
                "engine": lambda: [self.proc.pid] if self.proc else [],
                "broker": lambda: [self.broker_pid] if self.broker_pid else [],
            }
        )
        self.marks: dict[str, int] = {}
        self.warnings: list[str] = []

    def _embedded(self) -> bool:
        from stagebench.broker import is_embedded_broker

        return self.broker_pid is not None and is_embedded_broker(self.broker_pid)

    # --- configuration ---------------------------------------------------------
    def _check_combination(self) -> None:
        """Settings each valid alone whose combination would make the results wrong."""
        stateful = STAGES.index(self.run.stage) >= STAGES.index("join")
        require(
            self.publisher.time_scale == 1 or not stateful,
            "time_scale must be 1 for join and window stages: event time is the wall-clock "
            "second, so two data minutes in one second would share their join key",
        )
        require(
            self.pipeline.window_slide_ms == 1000,
            "the evaluator checks sliding windows with a 1 s slide only (window_slide_ms = 1000)",
        )
        if STAGES.index(self.run.stage) >= STAGES.index("tumbling"):
            # a built-in window closes once event time passes its end plus the watermark
            # delay, and each chained operator needs one more batch
            needed_s = (self.pipeline.watermark_delay_ms + 2000) / 1000
            require(
                self.run.tail_s >= needed_s,
                f"tail_s must be at least {needed_s:g} s (watermark delay + 2 s) so the last "
                "windows of the measured period close",
            )

    def _publisher_mapping(self) -> dict[str, Any]:
        from publisher.config import PublisherConfig

        section = self.settings.section("publisher")
        duration = self.run.duration_s + self.run.tail_s
        if self.run.workload == "single-burst":
            # the job starts after the backlog and takes a while to start: the runner stops
            # the publisher once the measured period and the tail are over
            backlog = section.get("backlog_s", PublisherConfig.backlog_s)
            duration += backlog + self.run.ready_timeout_s
        return {
            **section,
            "rate": self.run.rate,
            "workload": PUBLISHER_SHAPE[self.run.workload],
            "duration_s": duration,
            "speed_topic": self.topics.speed,
            "flow_topic": self.topics.flow,
        }

    def effective_config(self) -> dict[str, Any]:
        return {
            "run": as_dict(self.run),
            "publisher": as_dict(self.publisher),
            "pipeline": as_dict(self.pipeline),
            "evaluator": as_dict(self.evaluator),
            "sources": self.settings.sources,
        }

    # --- the flow --------------------------------------------------------------
    def execute(self) -> RunResult:
        from stagebench.metadata import machine, versions
        from stagebench.topics import check_topics, create_topics

        run, say = self.run, self.console.step
        self._write("config.json", self.effective_config())
        self.metadata = {
            # the version of a broker we did not start is unknown to us
            "versions": versions(kafka=KAFKA_VERSION if self._embedded() else None),
            "machine": machine(),
            "started_at": datetime.now(UTC).isoformat(),
        }
        say(f"run {self.run_id}: stage {run.stage} ({run.impl}), workload {run.workload}, "
            f"{run.rate:g} msg/s for {run.duration_s:g} s → {self.dir}")  # fmt: skip
        say(f"Kafka at {self.bootstrap}: creating fresh LogAppendTime topics")
        leader = create_topics(self.bootstrap, self.topics.all, partitions=run.partitions)
        self.leaders_before = check_topics(self.bootstrap, self.topics.all, leader).leaders
        status: dict[str, Any] = {"state": "running"}
        try:
            self.sampler.start()
            if run.workload == "single-burst":
                backlog = self.publisher.backlog_s
                self._start_publisher()
                say(f"publishing the {backlog:g} s backlog before the job starts")
                self._wait(backlog)
                self._start_pipeline()
                measured_until = time.monotonic() + run.duration_s
            else:
                self._start_pipeline()
                self._start_publisher()
                measured_until = time.monotonic() + run.duration_s
            say(f"measuring for {run.duration_s:g} s")
            self._wait_until(measured_until)
            from stagebench.kafka_time import newest_timestamp

            self.marks["end_ms"] = newest_timestamp(self.bootstrap, self.topics.inputs) or 0
            say(f"measured period over; publishing a {run.tail_s:g} s tail so windows close")
            if run.workload == "single-burst":  # its schedule runs on until stopped
                self._wait(run.tail_s)
                self.stop_publishing.set()
            self._join_publisher()
            self._drain()
            status = {"state": "complete"}
        except KeyboardInterrupt:
            status = {"state": "interrupted"}
            self.console.warn("interrupted: stopping the job and the publisher, keeping results")
            raise
        except StagebenchError as err:
            status = {"state": "failed", "error": str(err)}
            raise
        except BaseException as err:
            status = {"state": "failed", "error": repr(err)}
            raise
        finally:
            self._shutdown(status)
        self.leaders_after = check_topics(self.bootstrap, self.topics.all, leader).leaders
        return RunResult(self.dir, self._evaluate())

    def _start_pipeline(self) -> None:
        from pipelines.cli import TUNING

        cmd = [
            sys.executable, "-m", "stagebench", "pipeline",
            "--stage", self.pipeline.stage, "--impl", self.pipeline.impl,
            "--speed-topic", self.pipeline.speed_topic, "--flow-topic", self.pipeline.flow_topic,
            "--output-topic", self.pipeline.output_topic, "--run-id", self.run_id,
            "--run-dir", str(self.dir), "--checkpoint-dir", self.pipeline.checkpoint_dir,
            "--bootstrap", self.bootstrap, "--master", self.pipeline.master,
        ]  # fmt: skip
        for option, name, _, _ in TUNING:
            if name in self.settings.section("pipeline"):
                cmd += [option, str(getattr(self.pipeline, name))]
        for key, value in self.pipeline.spark_conf.items():
            cmd += ["--conf", f"{key}={value}"]
        self.console.step(f"starting the Spark job (master {self.pipeline.master})")
        with open(self.dir / "pipeline.log", "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C reaches us; we stop the job in order
            )  # fmt: skip
        ready = self.dir / "pipeline.ready"
        began = time.monotonic()
        deadline = began + self.run.ready_timeout_s
        while not ready.exists():
            self._check_health()
            if time.monotonic() > deadline:
                raise SparkError(
                    f"the Spark job was not running after {self.run.ready_timeout_s:g} s; "
                    f"see {self.dir / 'pipeline.log'}"
                )
            self.console.status(
                f"waiting for the Spark query to start ({time.monotonic() - began:.0f} s)"
            )
            time.sleep(0.5)
        self.marks["pipeline_ready_ms"] = int(time.time() * 1000)
        self.console.step("Spark query running")

    def _start_publisher(self) -> None:
        from publisher.producer import publish

        def work() -> None:
            try:
                summary = publish(self.bootstrap, self.publisher, self.stop_publishing, progress)
                self.publish_result["summary"] = summary
            except StagebenchError as err:  # reported by the main thread
                self.publish_result["error"] = err
            except Exception as err:
                self.publish_result["error"] = PublishError(f"the publisher failed: {err!r}")

        def progress(snap) -> None:
            self.console.status(
                f"publishing {snap.elapsed_s:5.1f}/{snap.end_s:g} s  sent {snap.sent:,}  "
                f"{snap.rate:,.0f} msg/s  lag {snap.lag_ms:.1f} ms"
                + ("  (publisher behind schedule!)" if snap.behind else "")
                + (f"  delivery errors {snap.delivery_errors}" if snap.delivery_errors else "")
            )

        self.marks["publish_started_ms"] = int(time.time() * 1000)
        self.publish_thread = threading.Thread(target=work, name="publisher", daemon=True)
        self.publish_thread.start()

    def _join_publisher(self) -> None:
        assert self.publish_thread is not None
        while self.publish_thread.is_alive():
            self._check_health()
            self.publish_thread.join(0.5)
        if err := self.publish_result.get("error"):
            raise err
        summary = self.publish_result["summary"]
        if not summary.ok:
            self._warn(
                f"publisher: {summary.delivery_errors} delivery errors, "
                f"{summary.undelivered} undelivered ({'; '.join(summary.first_errors)})"
            )
        if summary.behind:
            self._warn(
                f"publisher fell behind its schedule (send lag p99 {summary.send_lag_ms['p99']} "
                "ms): the offered load was lower than asked"
            )

    def _drain(self) -> None:
        """Wait until the job has processed everything: two empty batches in a row."""
        self.console.step("waiting for the job to drain")
        if self.pipeline.trigger == "real-time":
            # real-time mode reports progress only at its checkpoint interval; its
            # latency is milliseconds, so a short pause lets the last records through
            self._wait(REAL_TIME_DRAIN_S)
            self.marks["drained_ms"] = int(time.time() * 1000)
            return
        progress = self.dir / "engine_progress.jsonl"
        since_ms = int(time.time() * 1000)
        deadline = time.monotonic() + self.run.drain_timeout_s
        while time.monotonic() < deadline:
            self._check_health()
            if _drained(progress, since_ms):
                self.marks["drained_ms"] = int(time.time() * 1000)
                return
            time.sleep(0.5)
        self._warn(
            f"the job had not drained {self.run.drain_timeout_s:g} s after the input stopped; "
            "evaluating what arrived (late outputs count as missing)"
        )

    def _warn(self, message: str) -> None:
        """A reason not to trust this run's numbers: shown now and stored in summary.json."""
        self.console.warn(message)
        self.warnings.append(message)

    def _wait(self, seconds: float) -> None:
        self._wait_until(time.monotonic() + seconds)

    def _wait_until(self, deadline: float) -> None:
        """Sleep until ``deadline`` (monotonic), checking the health of the run meanwhile."""
        next_health = 0.0
        while (now := time.monotonic()) < deadline:
            if now >= next_health:
                self._check_health()
                next_health = now + HEALTH_EVERY_S
            time.sleep(min(0.2, max(0.0, deadline - now)))

    def _check_health(self) -> None:
        """Fail fast when the job died, the publisher failed or the broker stopped answering."""
        if self.proc is not None and self.proc.poll() is not None:
            raise SparkError(
                f"the Spark job exited with code {self.proc.returncode}: "
                f"{_last_error(self.dir / 'pipeline.log')}"
            )
        if err := self.publish_result.get("error"):
            raise err
        if not self._broker_alive():
            raise BrokerError(f"Kafka at {self.bootstrap} stopped answering during the run")

    def _broker_alive(self) -> bool:
        if self.broker_pid is not None:
            import psutil

            try:
                return psutil.Process(self.broker_pid).status() != psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return False
        failures = getattr(self, "_broker_failures", 0)
        try:
            from stagebench.broker import wait_until_reachable

            wait_until_reachable(self.bootstrap, 2.0)
            self._broker_failures = 0
        except BrokerError:
            self._broker_failures = failures + 1
        return self._broker_failures < BROKER_FAILURES_TOLERATED

    # --- shutdown and results --------------------------------------------------
    def _shutdown(self, status: dict[str, Any]) -> None:
        self.stop_publishing.set()
        if self.proc is not None and self.proc.poll() is None:
            self.console.step("stopping the Spark job")
            self.proc.send_signal(signal.SIGTERM)
            timeout = STOP_TIMEOUT_S if status["state"] == "complete" else FAILED_STOP_TIMEOUT_S
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.publish_thread is not None:
            self.publish_thread.join(10)
        samples = self.sampler.stop()
        _write_csv(self.dir / "resources.csv", samples)
        self.resources = resources.summarise(samples)
        if summary := self.publish_result.get("summary"):
            self._write("publisher.json", summary.to_dict())
        self.metadata["ended_at"] = datetime.now(UTC).isoformat()
        self._write("status.json", {**status, "marks_ms": self.marks, "run_dir": str(self.dir)})

    def _evaluate(self) -> dict[str, Any]:
        from evaluator import RunInfo, evaluate, save_run

        self.console.step("evaluating latencies from broker timestamps")
        summary = self.publish_result["summary"]
        info = RunInfo(
            id=self.run_id,
            stage=self.run.stage,
            output_topic=self.topics.output,
            input_topics=tuple(self.topics.inputs),
            impl=self.run.impl,
            workload=self.run.workload,
            rate=self.run.rate,
            duration_s=self.run.duration_s,
            bootstrap=self.bootstrap,
            end_ms=self.marks.get("end_ms") or None,
            metadata={
                **self.metadata,
                "publisher": summary.to_dict(),
                "resources": self.resources,
                "leaders": {"before": self.leaders_before, "after": self.leaders_after},
                "marks_ms": self.marks,
                "warnings": self.warnings,
            },
            config=self.effective_config(),
        )
        save_run(info, self.dir)
        result = evaluate(self.bootstrap, info, self.evaluator, self.dir)
        from stagebench.resource_plot import plot_resources

        plot_resources(self.dir)
        return result

    def _write(self, name: str, data: Any) -> None:
        (self.dir / name).write_text(json.dumps(data, indent=2, default=str) + "\n")


def _drained(progress: Path, since_ms: int) -> bool:
    """Two progress events after ``since_ms`` in a row with no input rows."""
    if not progress.exists():
        return False
    empty = 0
    for line in progress.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("time_ms", 0) < since_ms:
            continue
        if event.get("event") == "idle":
            return True
        if event.get("event") == "progress":
            empty = empty + 1 if event.get("numInputRows", 0) == 0 else 0
            if empty >= 2:
                return True
    return False


def _local_broker_pid(bootstrap: str) -> int | None:
    """Pid of the Kafka JVM when it runs on this machine (its resources are then sampled).

    A port forwarded into a container (docker-proxy) is not the broker: not sampled.
    """
    import psutil

    from stagebench.ports import listener_pid

    host, _, port = bootstrap.split(",")[0].rpartition(":")
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]") or not port.isdigit():
        return None
    pid = listener_pid(int(port))
    try:
        return pid if pid is not None and "kafka.Kafka" in psutil.Process(pid).cmdline() else None
    except psutil.Error:
        return None


def _last_error(log_file: Path) -> str:
    if not log_file.exists():
        return "no log"
    lines = [ln for ln in log_file.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1][:500] + f" (log: {log_file})"


def _write_csv(path: Path, rows: list[dict]) -> None:
    fields = ["time_ms", "process", "cpu_percent", "rss_mb", "heap_used_mb"]
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
