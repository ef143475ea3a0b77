"""One benchmark run of one stage, from fresh topics to summary.json.

The flow (docs/method.md#workloads): pick the broker → create the run's fresh
LogAppendTime topics and check their leaders → start the job
(:mod:`stagebench.run.job`) and wait until it runs → publish the workload and
warm up at its rate: fixed seconds, or until the live per-second latency has
settled (:mod:`stagebench.run.watch`) → mark the start of the measured period in
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

This module is the flow; its parts are apart, and the run's composition root
(:mod:`stagebench.run.root`) builds them and hands them to :class:`Run`: the
configurations (:mod:`stagebench.config.roles`), the publisher's thread
(:mod:`stagebench.run.publisher`), the health and leader checks
(:mod:`stagebench.run.health`), the broker's clock (:mod:`stagebench.run.broker_clock`),
what it samples of the machine (:mod:`stagebench.run.sampling`), its waits
(:mod:`stagebench.run.waiting`) and the faults (:mod:`stagebench.run.faults`).
"""

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evaluator.config import SETTLE_WINDOWS
from evaluator.evaluation import evaluate
from evaluator.latencies.lateness import dropped_by_watermark
from evaluator.model.result import Summary
from evaluator.model.run_info import RunInfo, RunMetadata, save_run
from ground import files, rundir
from ground.errors import FileError, StagebenchError
from ground.kafka.naming import RunTopics
from ground.kafka.topics import check_topics, create_topics
from ground.stages import stage
from publisher.workload import Workload
from stagebench.config.layers import Settings
from stagebench.config.roles import RoleConfigs
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.report import html as html_report
from stagebench.resources.sampler import MACHINE
from stagebench.run.broker_clock import BrokerClock
from stagebench.run.faults import FaultInjector
from stagebench.run.health import HealthMonitor
from stagebench.run.job import Job, progress_events
from stagebench.run.metadata import started
from stagebench.run.publisher import PublisherThread
from stagebench.run.sampling import RunResources
from stagebench.run.waiting import Waiter
from stagebench.run.warmup import Warmth
from stagebench.run.watch import OutputWatcher

SETTLE_EVERY_S = 2.0
STOP_TIMEOUT_S = 60.0
FAILED_STOP_TIMEOUT_S = 15.0
"""A failed or interrupted run (e.g. the broker died) cannot stop cleanly anyway."""


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    summary: Summary
    page: html_report.Page | None = None
    """The run's report.html."""


@dataclass(eq=False)
class Run:
    """The state of one run while it executes (see the module docstring for the flow), on
    the parts its composition root (:func:`stagebench.run.root.execute`) built."""

    run: RunConfig
    settings: Settings
    bootstrap: str
    run_id: str
    dir: Path
    console: Console
    workload: Workload
    topics: RunTopics
    config: RoleConfigs
    """Every configuration, built and validated before anything starts."""
    warmth: Warmth
    engine: Job
    publisher: PublisherThread
    health: HealthMonitor
    clock: BrokerClock
    machine: RunResources
    wait: Waiter
    injector: FaultInjector
    watcher: OutputWatcher | None = field(default=None, init=False)
    marks: dict[str, int] = field(default_factory=dict, init=False)
    warmup: dict[str, Any] = field(default_factory=dict, init=False)
    warnings: list[str] = field(default_factory=list, init=False)
    warm_up_began: float = field(default_factory=time.monotonic, init=False)

    # --- the flow --------------------------------------------------------------
    def execute(self) -> RunResult:
        run, say = self.run, self.console.step
        self._write(rundir.CONFIG, self.config.effective(self.run, self.settings))
        broker = self.health.local_broker
        self.metadata: RunMetadata = started(
            broker is not None and broker.kind == "embedded", self.run.runs_on()
        )
        say(f"run {self.run_id}: stage {run.stage} ({run.impl}), workload {run.workload}, "
            f"{run.rate:g} msg/s for {run.duration_s:g} s → {self.dir}")  # fmt: skip
        say(f"Kafka at {self.bootstrap}: creating fresh LogAppendTime topics")
        leader = create_topics(
            self.bootstrap, self.topics.all, partitions=run.partitions, leader=run.leader,
            replication=run.replication,
        )  # fmt: skip
        self.health.leaders_before = check_topics(self.bootstrap, self.topics.all, leader).leaders
        status: dict[str, Any] = {"state": "running"}
        self.machine.measure_pace()
        try:
            self.machine.start()
            if self.workload.backlog_first:
                backlog = self.config.publisher.backlog_s
                self._start_publisher()
                self.wait(backlog, f"publishing the {backlog:g} s backlog before the job starts")
                self._start_pipeline()
                self.warmup = {"mode": "none (backlog)", "seconds": 0.0, "settled": None}
            else:
                self._start_pipeline()
                self._start_publisher()
                self._lead_in()
                self._warm_up()
                self.marks["start_ms"] = self.clock.mark("start of the measured period")
            if run.fault:
                self.wait(run.fault_at_s, "measuring")
                self.injector.inject()
                self.wait(run.duration_s - run.fault_at_s, "measuring the recovery")
            else:
                self.wait(run.duration_s, "measuring")
            self.marks["end_ms"] = self.clock.mark("end of the measured period")
            if tail := run.published_tail_s:
                say(f"measured period over; publishing a {tail:g} s tail so windows close")
                self.wait(tail, "tail")
            self.publisher.stop()
            self.publisher.join(self.health.check, self.warn)
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
            try:
                self._shutdown(status)
            except FileError as err:
                if status["state"] == "complete":
                    raise
                # a full disk must not hide the error that failed the run, raised on
                self.console.warn(str(err))
        summary = self._evaluate()
        page = html_report.write(self.dir)
        self.console.step(f"wrote {page.describe()}")
        return RunResult(self.dir, summary, page)

    def _lead_in(self) -> None:
        if self.config.publisher.lead_in_s:
            rate = self.run.rate * self.config.publisher.lead_in_share
            self.wait(self.config.publisher.lead_in_s, f"lead-in at {rate:,.0f} msg/s")

    def _warm_up(self) -> None:
        """Publish at the rate until the job is warm: fixed seconds, or until settled."""
        run = self.run
        began = self.warm_up_began = time.monotonic()
        lead_in_s = self.config.publisher.lead_in_s
        lead_in = {"lead_in_s": lead_in_s} if lead_in_s else {}
        if run.warmup_s != "auto":
            self.wait(float(run.warmup_s), "warming up")
            self.warmup = {"mode": "fixed", "seconds": float(run.warmup_s), "settled": None,
                           **lead_in}  # fmt: skip
            if not run.warmup_s:
                self.warn("no warm-up (warmup 0): start-up latencies are measured too")
            return
        named = self.topics.inputs if stage(run.stage).own else ()
        self.watcher = OutputWatcher(self.bootstrap, self.topics.output, named).start()
        settled = False
        shortest, window = self.warmth.settling(run)
        tolerance = self.config.evaluator.steady_tolerance
        next_check = began + max(SETTLE_WINDOWS * window, shortest)
        with self.console.task("warming up until the latency is steady", run.warmup_max_s) as up:
            while (now := time.monotonic()) < began + run.warmup_max_s:
                self.health.check()
                if now >= next_check:
                    if settled := self.watcher.settled(window, tolerance):
                        break
                    next_check = now + SETTLE_EVERY_S
                up(now - began, self.publisher.progress_line())
                time.sleep(0.2)
        found = round(time.monotonic() - began, 1)
        self.warmup = {"mode": "auto", "seconds": found, "settled": settled,
                       "min_s": shortest, "max_s": run.warmup_max_s,
                       "window_s": window, "windows": SETTLE_WINDOWS, "tolerance": tolerance,
                       **lead_in}  # fmt: skip
        settling = f"{SETTLE_WINDOWS} windows of {window:g} s in a row"
        if settled:
            self.console.step(
                f"warm-up over after {found:g} s: the latency has settled (the medians of "
                f"{settling} agree within {tolerance * 100:g} %)"
            )
        elif SETTLE_WINDOWS * window > run.warmup_max_s:
            self.warn(
                f"the latency could not settle: {settling} take longer than the longest "
                f"warm-up ({run.warmup_max_s:g} s, warmup_max_s); shorten settle_window_s"
            )
        else:
            self.warn(
                f"the latency had not settled after the longest warm-up ({run.warmup_max_s:g} s, "
                f"warmup_max_s): the measured period may still be warming up or overloaded"
            )

    def _start_pipeline(self) -> None:
        settings = self.config.pipeline.settings
        if (install := self.run.runs_on().install) is not None:
            install(settings)
        where = f" ({settings.place})" if settings is not None and settings.place else ""
        self.console.step(f"starting {self.run.runs_on().whose} job{where}")

        def started() -> None:
            # a backlog's time to first output and catch-up count from here, on the
            # broker's clock (docs/method.md#workloads)
            self.marks["job_started_ms"] = self.clock.mark("the job's start")

        with self.console.task("waiting for the job to run") as update:
            self.engine.start(
                self.run.ready_timeout_s, self.health.check, update,
                on_started=started if self.workload.backlog_first else None,
            )  # fmt: skip
        self.marks["pipeline_ready_ms"] = int(time.time() * 1000)
        self.console.step("the job is running")

    def _start_publisher(self) -> None:
        self.marks["publish_started_ms"] = int(time.time() * 1000)
        self.publisher.start()

    def _drain(self) -> None:
        self.console.step("waiting for the job to drain")
        if self.engine.drain(self.run.drain_timeout_s, self.health.check):
            self.marks["drained_ms"] = int(time.time() * 1000)
            return
        self.warn(
            f"the job had not drained {self.run.drain_timeout_s:g} s after the input stopped; "
            "evaluating what arrived (late outputs count as missing)"
        )

    def warn(self, message: str) -> None:
        """A reason not to trust this run's numbers: shown now and stored in summary.json."""
        self.console.warn(message)
        self.warnings.append(message)

    # --- shutdown and results --------------------------------------------------
    def _shutdown(self, status: dict[str, Any]) -> None:
        self.publisher.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self.engine.pid is not None:
            self.console.step("stopping the job")
            timeout = STOP_TIMEOUT_S if status["state"] == "complete" else FAILED_STOP_TIMEOUT_S
            self.engine.stop(timeout)
        self.publisher.wait(10)
        self.resources, warnings = self.machine.stop(
            self.dir / rundir.RESOURCES,
            self.marks.get("start_ms"),
            self.marks.get("end_ms"),
            self.health.local_broker,
        )
        for warning in warnings:
            self.warn(warning)
        if summary := self.publisher.summary:
            self._write(rundir.PUBLISHER, summary.to_dict())
        self.metadata["ended_at"] = datetime.now(UTC).isoformat()
        self._write(rundir.STATUS, {**status, "marks_ms": self.marks, "run_dir": str(self.dir)})

    def _evaluate(self) -> Summary:
        self.console.step("evaluating latencies from broker timestamps")
        info = RunInfo(
            id=self.run_id,
            stage=self.run.stage,
            engine=self.run.runs_on().name,
            event_clock=self.run.runs_on().event_clock,
            carries_inputs=self.run.runs_on().carries_inputs,
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
                "publisher": self.publisher.result.to_dict(),
                "resources": self.resources,
                # the host (processor, memory) beside what the run used of it
                "machine": {
                    **{k: self.metadata["machine"][k] for k in ("processor", "memory_gb")},
                    **self.resources.get(MACHINE, {}),
                },
                "leaders": {"before": self.health.leaders_before, "after": self.leaders_after},
                "faults": self.injector.faults,
                "marks_ms": self.marks,
                "warmup": {**self.warmup, **self.warmth.record(self.warm_up_began)},
                "warnings": self.warnings,
                "dropped_by_watermark": dropped_by_watermark(
                    progress_events(self.dir / rundir.PROGRESS)
                ),
            },
            config=self.config.effective(self.run, self.settings),
            disturbances=(
                *self.clock.bursts(self.workload, self.config.publisher),
                *self.injector.windows(),
            ),
        )
        save_run(info, self.dir)
        return evaluate(self.bootstrap, info, self.config.evaluator, self.dir)

    def _write(self, name: str, data: Any) -> None:
        files.write(self.dir / name, json.dumps(data, indent=2, default=str) + "\n")
