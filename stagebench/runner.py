"""One benchmark run of one stage, from fresh topics to summary.json.

The flow (docs/method.md#workloads): pick the broker → create the run's fresh
LogAppendTime topics and check their leaders → start the job
(:mod:`stagebench.engine`) and wait until it runs → publish the workload and
warm up at its rate: fixed seconds, or until the live per-second latency has
settled (:mod:`stagebench.watch`) → mark the start of the measured period in
broker time → measure for the duration → mark its end → keep publishing for a
short tail so event-time windows close → wait until the job has drained → stop
it → check the leaders again → place the bursts of a burst workload and the
fault of a fault run on the broker's clock → evaluate. The leaders are also
polled throughout: on a cluster a leader change (a broker restarted) would mix
two broker clocks, so it fails the run at once, saying which partitions moved
and when. A workload whose load is a backlog publishes it before the job starts
and is measured from the job's start. CPU of the machine and of every process
of the run is sampled throughout.
Whatever happens, the run directory keeps what was collected; a failed or
interrupted run says so in ``status.json``.
"""

import csv
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from evaluator.config import SETTLE_WINDOWS, EvaluatorConfig
from evaluator.evaluation import evaluate
from evaluator.recovery import Window
from evaluator.run_info import RunInfo, save_run
from ground import rundir
from ground.config import as_dict, from_mapping, require
from ground.errors import BrokerError, PublishError, StagebenchError, TopicError
from ground.kafka import KAFKA_VERSION
from ground.kafka.broker import wait_until_reachable
from ground.kafka.clock import newest_timestamp, oldest_timestamp
from ground.kafka.local import LocalBroker, local_broker
from ground.kafka.naming import RunTopics, new_run_id
from ground.kafka.resolve import resolve
from ground.kafka.topics import admin_client, check_topics, create_topics, current_leaders
from ground.stages import stage
from pipelines.config import PipelineConfig
from publisher.config import PublisherConfig
from publisher.producer import publish
from publisher.sizing import derive, schedule
from publisher.summary import ProgressSnapshot
from publisher.workload import workload
from stagebench import html_report, pace, resources
from stagebench.console import Console
from stagebench.engine import Engine
from stagebench.fault_injection import embedded_broker_of, kill_one_executor
from stagebench.faults import BROKER_FAULTS
from stagebench.metadata import machine, versions
from stagebench.resource_plot import plot_resources
from stagebench.settings import RunConfig, Settings
from stagebench.watch import OutputWatcher

log = logging.getLogger(__name__)

HEALTH_EVERY_S = 2.0
LEADERS_EVERY_S = 5.0
SETTLE_EVERY_S = 2.0
BROKER_FAILURES_TOLERATED = 3
MARK_ATTEMPTS = 5
MARK_RETRY_S = 2.0
FAULT_END_MARK_ATTEMPTS = 15
"""After a fault the publisher reconnects with librdkafka's backoff (up to 10 s)."""
PUBLISH_MARGIN_S = 60.0
"""The publisher's schedule runs this much past the planned end; the runner stops it."""
STOP_TIMEOUT_S = 60.0
FAILED_STOP_TIMEOUT_S = 15.0
"""A failed or interrupted run (e.g. the broker died) cannot stop cleanly anyway."""


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    page: html_report.Page | None = None
    """The run's report.html."""


def run_dir_name(stage: str, run_id: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{stage}-{run_id}"


def execute(run: RunConfig, settings: Settings, console: Console | None = None) -> RunResult:
    """Run one stage end to end; the run directory and its summary."""
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
        self.run, self.bootstrap, self.run_id, self.dir = run, bootstrap, run_id, run_dir
        self.console = console
        self.workload = workload(run.workload)
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
                    else str(run_dir / rundir.CHECKPOINT)
                ),
            },
            "pipeline",
        )
        # the run marks where measuring starts (after its warm-up, or at the job's start
        # after a backlog) in broker time: the evaluator trims nothing more
        self.evaluator = from_mapping(
            EvaluatorConfig,
            {
                **settings.section("evaluator"),
                "warmup_s": 0.0,
                "sliding_window_s": self.pipeline.window_length_ms // 1000,
                "lookback_short_s": self.pipeline.lookback_short_ms // 1000,
                "lookback_long_s": self.pipeline.lookback_long_ms // 1000,
            },
            "evaluator",
        )
        self._check_combination()
        # its processes are sampled as the broker when it runs here, in a container too
        self.local_broker: LocalBroker | None = local_broker(bootstrap)
        self.engine = Engine(run_dir, self.pipeline)
        self.stop_publishing = threading.Event()
        self.publish_thread: threading.Thread | None = None
        self.publish_result: dict[str, Any] = {}
        self.publish_progress: ProgressSnapshot | None = None
        self.sampler = resources.ResourceSampler(
            {
                # every process of the job: the driver, its JVM, Python workers
                "engine": resources.Group(lambda: [self.engine.pid] if self.engine.pid else []),
                "broker": resources.Group(lambda: list(self.broker_pids)),
                # this process: the publisher and the output watcher (the job is its child)
                "bench": resources.Group(lambda: [os.getpid()], recursive=False),
            }
        )
        self.watcher: OutputWatcher | None = None
        self.marks: dict[str, int] = {}
        self.warmup: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.pace_before_ms: float | None = None
        self._broker_failures = 0
        self._admin = admin_client(bootstrap)
        self._next_leader_check = 0.0
        self.faults: list[dict[str, Any]] = []
        self._broker_down = False
        # a broker fault needs a broker it can restart: refused before anything starts
        self._restartable = embedded_broker_of(bootstrap) if run.fault in BROKER_FAULTS else None

    @property
    def broker_pids(self) -> tuple[int, ...]:
        """Roots of the broker's process trees on this machine; none for a remote Kafka."""
        return self.local_broker.pids if self.local_broker else ()

    # --- configuration ---------------------------------------------------------
    def _check_combination(self) -> None:
        """Settings each valid alone whose combination would make the results wrong."""
        last = stage(self.run.stage)
        require(
            self.publisher.time_scale == 1 or not last.stateful,
            "time_scale must be 1 for join and window stages: event time is the wall-clock "
            "second, so two data minutes in one second would share their join key",
        )
        require(
            self.pipeline.window_slide_ms == 1000,
            "the evaluator checks sliding windows with a 1 s slide only (window_slide_ms = 1000)",
        )
        if last.window:
            # a built-in window closes once event time passes its end plus the watermark
            # delay, and each chained operator needs one more batch
            needed_s = (self.pipeline.watermark_delay_ms + 2000) / 1000
            require(
                self.run.tail_s >= needed_s,
                f"tail_s must be at least {needed_s:g} s (watermark delay + 2 s) so the last "
                "windows of the measured period close",
            )

    def _publisher_mapping(self) -> dict[str, Any]:
        section = self.settings.section("publisher")
        # an upper bound: the runner stops the publisher once the tail is over, since the
        # warm-up (auto) and the job's start (after a backlog) take as long as they take
        run = self.run
        duration = run.duration_s + run.tail_s + PUBLISH_MARGIN_S
        # the command line's (or [run]'s) lead-in, else [publisher]'s
        lead_in = run.lead_in_s or float(section.get("lead_in_s", 0.0))
        if self.workload.backlog_first:
            backlog = section.get("backlog_s", PublisherConfig.backlog_s)
            duration += backlog + run.ready_timeout_s
        else:
            duration += lead_in
            duration += run.warmup_max_s if run.warmup_s == "auto" else float(run.warmup_s)
        return {
            **section,
            "rate": self.run.rate,
            "workload": self.run.workload,
            "lead_in_s": lead_in,
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
        run, say = self.run, self.console.step
        self._write(rundir.CONFIG, self.effective_config())
        embedded = self.local_broker is not None and self.local_broker.kind == "embedded"
        self.metadata = {
            # the version of a broker we did not start is unknown to us
            "versions": versions(kafka=KAFKA_VERSION if embedded else None),
            "machine": machine(),
            "started_at": datetime.now(UTC).isoformat(),
        }
        say(f"run {self.run_id}: stage {run.stage} ({run.impl}), workload {run.workload}, "
            f"{run.rate:g} msg/s for {run.duration_s:g} s → {self.dir}")  # fmt: skip
        say(f"Kafka at {self.bootstrap}: creating fresh LogAppendTime topics")
        leader = create_topics(
            self.bootstrap, self.topics.all, partitions=run.partitions, leader=run.leader,
            replication=run.replication,
        )  # fmt: skip
        self.leaders_before = check_topics(self.bootstrap, self.topics.all, leader).leaders
        status: dict[str, Any] = {"state": "running"}
        # the host's speed before anything of the run loads it (only the broker idles)
        self.pace_before_ms = pace.measure()
        try:
            self.sampler.start()
            if self.workload.backlog_first:
                backlog = self.publisher.backlog_s
                self._start_publisher()
                self._wait(backlog, f"publishing the {backlog:g} s backlog before the job starts")
                self._start_pipeline()
                self.warmup = {"mode": "none (backlog)", "seconds": 0.0, "settled": None}
            else:
                self._start_pipeline()
                self._start_publisher()
                self._lead_in()
                self._warm_up()
                self.marks["start_ms"] = self._broker_mark("start of the measured period")
            if run.fault:
                self._wait(run.fault_at_s, "measuring")
                self._inject_fault()
                self._wait(run.duration_s - run.fault_at_s, "measuring the recovery")
            else:
                self._wait(run.duration_s, "measuring")
            self.marks["end_ms"] = self._broker_mark("end of the measured period")
            say(f"measured period over; publishing a {run.tail_s:g} s tail so windows close")
            self._wait(run.tail_s, "tail")
            self.stop_publishing.set()
            self._join_publisher()
            self._drain()
            # a leader that moved after the last poll fails the run before it is called
            # complete
            self.leaders_after = check_topics(self.bootstrap, self.topics.all, leader).leaders
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
        summary = self._evaluate()
        page = html_report.write(self.dir)
        self.console.step(f"wrote {page.describe()}")
        return RunResult(self.dir, summary, page)

    def _lead_in(self) -> None:
        if self.publisher.lead_in_s:
            rate = self.run.rate * self.publisher.lead_in_share
            self._wait(self.publisher.lead_in_s, f"lead-in at {rate:,.0f} msg/s")

    def _warm_up(self) -> None:
        """Publish at the rate until the job is warm: fixed seconds, or until settled."""
        run = self.run
        began = time.monotonic()
        lead_in = {"lead_in_s": self.publisher.lead_in_s} if self.publisher.lead_in_s else {}
        if run.warmup_s != "auto":
            self._wait(float(run.warmup_s), "warming up")
            self.warmup = {"mode": "fixed", "seconds": float(run.warmup_s), "settled": None,
                           **lead_in}  # fmt: skip
            if not run.warmup_s:
                self._warn("no warm-up (warmup 0): start-up latencies are measured too")
            return
        self.watcher = OutputWatcher(self.bootstrap, self.topics.output).start()
        settled = False
        shortest = run.shortest_warmup_s
        window, tolerance = run.settle_window_s, self.evaluator.steady_tolerance
        next_check = began + max(SETTLE_WINDOWS * window, shortest)
        with self.console.task("warming up until the latency is steady", run.warmup_max_s) as up:
            while (now := time.monotonic()) < began + run.warmup_max_s:
                self._check_health()
                if now >= next_check:
                    if settled := self.watcher.settled(window, tolerance):
                        break
                    next_check = now + SETTLE_EVERY_S
                up(now - began, self._publishing())
                time.sleep(0.2)
        found = round(time.monotonic() - began, 1)
        self.warmup = {"mode": "auto", "seconds": found, "settled": settled,
                       "min_s": shortest, "max_s": run.warmup_max_s,
                       "window_s": window, "windows": SETTLE_WINDOWS, "tolerance": tolerance,
                       **lead_in}  # fmt: skip
        settling = f"{SETTLE_WINDOWS} windows of {window:g} s in a row"
        if settled:
            self.console.step(
                f"warm-up over after {found:g} s: the latency has settled ({settling} each "
                f"changed less than {tolerance * 100:g} % and their medians agree within it)"
            )
        elif SETTLE_WINDOWS * window > run.warmup_max_s:
            self._warn(
                f"the latency could not settle: {settling} take longer than the longest "
                f"warm-up ({run.warmup_max_s:g} s, warmup_max_s); shorten settle_window_s"
            )
        else:
            self._warn(
                f"the latency had not settled after the longest warm-up ({run.warmup_max_s:g} s, "
                f"warmup_max_s): the measured period may still be warming up or overloaded"
            )

    def _inject_fault(self) -> None:
        """Inject the run's fault and record its window in broker time: from the last
        input appended before it to the first appended after the system is back (the
        broker answers again, the job runs again; instantly for a lost executor)."""
        kind = self.run.fault
        start_ms = self._broker_mark(f"start of the {kind}")
        began = time.monotonic()
        detail: dict[str, Any] = {}
        back_after_ms = start_ms
        if kind in BROKER_FAULTS:
            back_after_ms = max(start_ms, self._restart_broker(kill=kind == "broker-kill"))
        elif kind == "engine-restart":
            self.console.step("fault: killing the Spark job (SIGKILL to its process group)")
            self.engine.kill()
            with self.console.task("restarting the job from its checkpoint") as update:
                self.engine.start(self.run.ready_timeout_s, self._check_health, update, True)
        else:
            app = self.engine.app_id or ""
            detail["executor_pid"] = kill_one_executor(app)
            self.console.step(f"fault: killed executor {detail['executor_pid']} of {app}")
        end_ms = self._broker_mark(
            f"end of the {kind}", after_ms=back_after_ms, attempts=FAULT_END_MARK_ATTEMPTS
        )
        seconds = round(time.monotonic() - began, 1)
        self.faults.append({"kind": kind, "start_ms": start_ms, "end_ms": end_ms,
                            "seconds": seconds, **detail})  # fmt: skip
        self.console.step(f"{kind} over after {seconds:g} s; measuring the recovery")

    def _restart_broker(self, kill: bool) -> int:
        """Stop the embedded broker for ``fault_down_s``, then start it on its data; the
        epoch ms at which it was down.

        That moment is read from this machine's clock, which is the broker's: a broker
        fault is refused for any broker but the embedded one here. It bounds every append
        before the outage, including those the broker took while shutting down, after the
        fault's start mark: the window ends at the first input appended after it.
        """
        down = self.run.fault_down_s
        how = "SIGKILL" if kill else "SIGTERM"
        self.console.step(f"fault: stopping the broker ({how}) for {down:g} s")
        self._broker_down = True  # the health check must not take the outage for a failure
        try:
            self._restartable.stop_node(1, kill=kill)
            stopped_ms = int(time.time() * 1000)
            try:
                self._wait(down, "broker down")
            finally:  # an interrupted outage ends too: the broker is left as it was found
                self._restartable.start_node(1)
        finally:
            self._broker_down = False
        self.local_broker = local_broker(self.bootstrap)
        return stopped_ms

    def _broker_mark(
        self, what: str, after_ms: int | None = None, attempts: int = MARK_ATTEMPTS
    ) -> int:
        """The broker's clock now: the newest LogAppendTime of the input topics.

        Retried: a period whose end cannot be read is never silently replaced by another.
        With ``after_ms``, only a mark later than it counts (the first input appended
        after a fault, not the last one before it).
        """
        for attempt in range(attempts):
            try:
                mark = newest_timestamp(self.bootstrap, self.topics.inputs)
                if mark is not None and (after_ms is None or mark > after_ms):
                    return mark
            except BrokerError as err:
                log.info("reading the broker clock (%s), attempt %d: %s", what, attempt + 1, err)
            self._check_health()
            time.sleep(MARK_RETRY_S)
        raise BrokerError(
            f"could not read the broker's clock for the {what} after {attempts} attempts: "
            f"no input record readable on {self.bootstrap}"
        )

    def _start_pipeline(self) -> None:
        if stage(self.run.stage).spark:
            self.console.step(f"starting the Spark job (master {self.pipeline.master})")
        else:
            self.console.step("starting the floor: a plain Kafka consume→produce loop")

        def started() -> None:
            # a backlog's time to first output and catch-up count from here, on the
            # broker's clock (docs/method.md#workloads)
            self.marks["job_started_ms"] = self._broker_mark("the job's start")

        with self.console.task("waiting for the job to run") as update:
            self.engine.start(
                self.run.ready_timeout_s, self._check_health, update,
                on_started=started if self.workload.backlog_first else None,
            )  # fmt: skip
        self.marks["pipeline_ready_ms"] = int(time.time() * 1000)
        self.console.step("the job is running")

    def _start_publisher(self) -> None:
        def work() -> None:
            try:
                summary = publish(self.bootstrap, self.publisher, self.stop_publishing, progress)
                self.publish_result["summary"] = summary
            except StagebenchError as err:  # reported by the main thread
                self.publish_result["error"] = err
            except Exception as err:
                self.publish_result["error"] = PublishError(f"the publisher failed: {err!r}")

        def progress(snap: ProgressSnapshot) -> None:
            self.publish_progress = snap

        self.marks["publish_started_ms"] = int(time.time() * 1000)
        self.publish_thread = threading.Thread(target=work, name="publisher", daemon=True)
        self.publish_thread.start()

    def _publishing(self) -> str:
        """The publisher's latest progress, for the display."""
        snap = self.publish_progress
        if snap is None:
            return ""
        return (
            f"sent {snap.sent:,}  {snap.rate:,.0f} msg/s  lag {snap.lag_ms:.1f} ms"
            + ("  BEHIND SCHEDULE" if snap.behind else "")
            + (f"  delivery errors {snap.delivery_errors}" if snap.delivery_errors else "")
        )

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
            lag = summary.send_lag_ms
            self._warn(
                f"the publisher fell behind its schedule: max send lag {lag['max']:.0f} ms "
                f"(warn above {self.publisher.behind_warn_ms:g} ms, behind_warn_ms; p99 "
                f"{lag['p99']:.1f} ms): the offered load was lower than asked"
            )

    def _drain(self) -> None:
        self.console.step("waiting for the job to drain")
        if self.engine.drain(self.run.drain_timeout_s, self._check_health):
            self.marks["drained_ms"] = int(time.time() * 1000)
            return
        self._warn(
            f"the job had not drained {self.run.drain_timeout_s:g} s after the input stopped; "
            "evaluating what arrived (late outputs count as missing)"
        )

    def _warn(self, message: str) -> None:
        """A reason not to trust this run's numbers: shown now and stored in summary.json."""
        self.console.warn(message)
        self.warnings.append(message)

    def _wait(self, seconds: float, what: str) -> None:
        """Sleep ``seconds`` with a progress display, checking the run's health meanwhile."""
        began = time.monotonic()
        deadline = began + seconds
        next_health = 0.0
        with self.console.task(what, seconds) as update:
            while (now := time.monotonic()) < deadline:
                if now >= next_health:
                    self._check_health()
                    next_health = now + HEALTH_EVERY_S
                update(now - began, self._publishing())
                time.sleep(min(0.2, max(0.0, deadline - now)))

    def _check_health(self) -> None:
        """Fail fast when the job died, the publisher failed, the broker stopped answering
        or a partition changed leader."""
        self.engine.check()
        if err := self.publish_result.get("error"):
            raise err
        if self._broker_down:
            return
        if not self._broker_alive():
            raise BrokerError(f"Kafka at {self.bootstrap} stopped answering during the run")
        if time.monotonic() >= self._next_leader_check:
            self._check_leaders()
            self._next_leader_check = time.monotonic() + LEADERS_EVERY_S

    def _check_leaders(self) -> None:
        """TopicError when any partition is led by another broker than at the start.

        A partition without a leader for the moment (-1, an election under way or the
        only broker restarting) or missing from the metadata (a broker just back) is
        unknown this round, not a change: nothing is appended while it has no leader,
        and whoever leads next is judged at the next poll and after the run.
        """
        try:
            now = current_leaders(self._admin, self.topics.all)
        except BrokerError as err:  # liveness is judged by _broker_alive
            log.info("reading the partition leaders: %s", err)
            return
        moved = {
            f"{name}[{p}]: {was} → {led}"
            for name, leaders in self.leaders_before.items()
            for p, was in enumerate(leaders)
            if (led := _leader(now, name, p)) is not None and led != was
        }
        if moved:
            raise TopicError(
                f"partition leaders changed during the run ({', '.join(sorted(moved))}), "
                f"seen at {datetime.now(UTC):%H:%M:%S} UTC (local clock): "
                "timestamps from then on would come from another broker's clock, so the run "
                "is stopped and nothing is measured"
            )

    def _broker_alive(self) -> bool:
        """A local broker: any of its processes runs (a cluster with one node down still
        answers; a leader change is :meth:`_check_leaders`'s). Else: it answers."""
        if self.broker_pids:
            return any(_running(pid) for pid in self.broker_pids)
        try:
            wait_until_reachable(self.bootstrap, 2.0)
            self._broker_failures = 0
        except BrokerError:
            self._broker_failures += 1
        return self._broker_failures < BROKER_FAILURES_TOLERATED

    # --- shutdown and results --------------------------------------------------
    def _shutdown(self, status: dict[str, Any]) -> None:
        self.stop_publishing.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self.engine.pid is not None:
            self.console.step("stopping the job")
            timeout = STOP_TIMEOUT_S if status["state"] == "complete" else FAILED_STOP_TIMEOUT_S
            self.engine.stop(timeout)
        if self.publish_thread is not None:
            self.publish_thread.join(10)
        samples = self.sampler.stop()
        pace_after_ms = pace.measure()  # the job has stopped: the host's speed after the run
        _write_csv(self.dir / rundir.RESOURCES, samples)
        # the measured period, read on this machine's clock: the same clock as the
        # broker's when it runs here; otherwise off by their skew, which is small beside
        # one-second samples
        self.resources = resources.summarise(
            samples, self.marks.get("start_ms"), self.marks.get("end_ms"), self.sampler.cores
        )
        machine_pace = pace.section(self.pace_before_ms, pace_after_ms)
        self.resources[resources.MACHINE]["pace"] = machine_pace
        # what the broker was and what it used: a container's processes are the broker's
        usage = self.resources.get("broker") or {}
        self.resources[resources.MACHINE]["broker"] = {
            **(self.local_broker.describe() if self.local_broker else {"kind": "remote"}),
            "cpu_percent_mean": usage.get("cpu_percent_mean"),
            "rss_mb_max": usage.get("rss_mb_max"),
        }
        for warning in resources.machine_warnings(self.resources) + pace.run_warnings(machine_pace):
            self._warn(warning)
        if summary := self.publish_result.get("summary"):
            self._write(rundir.PUBLISHER, summary.to_dict())
        self.metadata["ended_at"] = datetime.now(UTC).isoformat()
        self._write(rundir.STATUS, {**status, "marks_ms": self.marks, "run_dir": str(self.dir)})

    def _evaluate(self) -> dict[str, Any]:
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
            start_ms=self.marks.get("start_ms"),
            end_ms=self.marks["end_ms"],
            metadata={
                **self.metadata,
                "publisher": summary.to_dict(),
                "resources": self.resources,
                "machine": self.resources.get(resources.MACHINE),
                "leaders": {"before": self.leaders_before, "after": self.leaders_after},
                "faults": self.faults,
                "marks_ms": self.marks,
                "warmup": self.warmup,
                "warnings": self.warnings,
            },
            config=self.effective_config(),
            disturbances=(
                *self._bursts(),
                *(Window(f["kind"], f["start_ms"], f["end_ms"]) for f in self.faults),
            ),
        )
        save_run(info, self.dir)
        result = evaluate(self.bootstrap, info, self.evaluator, self.dir)
        plot_resources(self.dir, remote_broker=self.local_broker is None, cores=self.sampler.cores)
        return result

    def _bursts(self) -> tuple[Window, ...]:
        """The bursts that were published, as windows in broker time (for the recovery
        the evaluator reports after each).

        The publisher keeps no per-burst send times and records carry only their
        scheduled send time, so the schedule's burst offsets are placed after the
        LogAppendTime of the run's first input: the schedule's first pair is due at
        its start and the topics are fresh, so that record marks the start on the
        broker's own clock, late by one send (milliseconds, beside the one-second
        series recovery is read from); the publisher's start time would add its
        clock's skew. The windows are as scheduled: a publisher trailing its schedule
        in a burst (send lag in publisher.json, a warning above ``behind_warn_ms``)
        makes the real burst longer. Bursts due after the last input were never sent.
        """
        if not self.workload.bursts or self.publisher.from_file:  # a replay has no schedule
            return ()
        planned = schedule(self.publisher, derive(self.publisher))
        first = oldest_timestamp(self.bootstrap, self.topics.inputs)
        last = newest_timestamp(self.bootstrap, self.topics.inputs)
        if first is None or last is None:
            return ()
        return tuple(
            Window("burst", first + round(a * 1000), first + round(b * 1000))
            for a, b in planned.burst_windows((last - first) / 1000)
        )

    def _write(self, name: str, data: Any) -> None:
        (self.dir / name).write_text(json.dumps(data, indent=2, default=str) + "\n")


def _leader(leaders: dict[str, list[int]], topic: str, partition: int) -> int | None:
    """The broker leading ``partition`` of ``topic`` in ``leaders``; None when unknown."""
    led = leaders.get(topic, [])
    return led[partition] if partition < len(led) and led[partition] >= 0 else None


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=resources.CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
