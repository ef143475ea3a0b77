"""The Spark application a suite's or a capacity search's runs share, and its warm-up
before any of them.

HotSpot compiles a method once it has run often enough, and a JVM that has compiled
what a query runs keeps it: a run of a warmed-up application starts where a job of
its own would be only after minutes (docs/method.md#one-application-per-suite). Most
of what a micro-batch runs, it runs once per batch, so what warms a stage up is
batches of its own query: the suite (or search) first runs each Spark stage it will
measure alone in the application, the deepest first (a deeper stage runs the operators
of those below it), on topics of its own at ``app_warmup_rate`` × its rate for a fixed
time, and measures nothing of it. Each stage then runs in turn, in the same application,
with fresh topics and checkpoint, and warms up by the settle rule with the short
windows of a warm JVM.

The run's composition root (:mod:`stagebench.run.root`) resolves the broker and hands
the warm-up the way to build each query it runs alone (:class:`Query`).
"""

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engines.config import PipelineConfig
from ground import rundir
from ground.errors import EngineError, StagebenchError
from ground.kafka.naming import RunTopics, new_run_id
from ground.kafka.topics import create_topics
from ground.stages import deepest_first
from stagebench.config.layers import Settings
from stagebench.config.roles import assemble
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.run.application import Application, session_conf
from stagebench.run.job import Job
from stagebench.run.publisher import PublisherThread

STOP_TIMEOUT_S = 60.0
APPLICATION_STOP_S = 60.0


@dataclass(frozen=True)
class Query:
    """A stage's query run alone in the application: its fresh topics, its job there and
    the publisher of its load."""

    topics: RunTopics
    job: Job
    publisher: PublisherThread


BuildQuery = Callable[[RunConfig, Settings, str, str, Path, Application], Query]
"""How the composition root builds a :class:`Query`: from the run, its settings, the
bootstrap address, the query's id and directory, and the application it runs in."""


@contextlib.contextmanager
def shared_application(
    parent: Path,
    runs: list[tuple[RunConfig, Settings]],
    base: RunConfig,
    console: Console,
    owner: str,
    bootstrap: str,
    build: BuildQuery,
) -> Iterator[tuple[Application | None, dict[str, Any] | None]]:
    """The Spark application ``runs`` share (in ``parent``/application), started with the
    settings of their first Spark run in micro-batches and warmed up on every Spark run it
    can take (each query built by ``build``), and what warmed it up; stopped on leaving.
    ``(None, None)`` when it can take no run, or (with a warning: the runs then get jobs of
    their own) when it cannot start or warm up. ``owner`` names whose it is in the
    messages ("suite", "search")."""
    takes: list[tuple[RunConfig, Settings]] = []
    application: Application | None = None
    for run, settings in runs:
        if run.runs_on().session is None or run.fault:
            continue
        pipeline = assemble(run, settings, bootstrap, owner, parent,
                            RunTopics.for_run(owner)).pipeline  # fmt: skip
        if application is None and session_conf(pipeline) is not None:
            application = Application(parent / rundir.APPLICATION, pipeline)
        if application is not None and application.accepts(pipeline):
            takes.append((run, settings))
    if application is None or not takes:
        yield None, None
        return
    console.step(f"starting the {owner}'s shared Spark application ({application.place})")
    shared: Application | None = application
    warmed_up = None
    try:
        with console.task("waiting for the Spark application") as update:
            application.start(base.ready_timeout_s, update)
        warmed_up = warm_up(application, takes, bootstrap, console, build)
    except StagebenchError as err:
        console.warn(f"the shared Spark application failed, each run gets a job of its own: {err}")
        application.close(APPLICATION_STOP_S)
        shared = None
    except BaseException:
        application.close(APPLICATION_STOP_S)
        raise
    try:
        yield shared, warmed_up
    finally:
        application.close(APPLICATION_STOP_S)


def warm_up(
    application: Application,
    runs: list[tuple[RunConfig, Settings]],
    bootstrap: str,
    console: Console,
    build: BuildQuery,
) -> dict[str, Any]:
    """Run each query of ``runs`` alone in ``application`` (:func:`turns`; ``build``
    builds it), each for the first run's ``app_warmup_s`` at ``app_warmup_rate`` times its
    rate; what was done, for each run's conditions (``application`` in its warm-up
    record)."""
    first = runs[0][0]
    rate, seconds = first.rate * first.app_warmup_rate, first.app_warmup_s
    root = application.dir / f"warmup-{new_run_id()}"
    began = time.monotonic()
    order = turns(runs)
    for k, (run, settings) in enumerate(order, 1):
        console.step(
            f"warming up the shared Spark application, {k} of {len(order)}: {run.stage} "
            f"({run.impl}) alone at {rate:,.0f} msg/s for {seconds:g} s, not measured"
        )
        warm_id = new_run_id()
        query = build(_alone(run, rate, seconds), settings, bootstrap, warm_id,
                      root / f"{run.stage}-{run.impl}-{warm_id}", application)  # fmt: skip
        _warm_alone(application, query, run, bootstrap, console, seconds)
    record = {
        "stages": [f"{run.stage}/{run.impl}" for run, _ in order],
        "rate": rate,
        "seconds": seconds,
        "took_s": round(time.monotonic() - began, 1),
        "dir": str(root),
    }
    application.warmed_up = record
    return record


def turns(runs: list[tuple[RunConfig, Settings]]) -> list[tuple[RunConfig, Settings]]:
    """``runs`` in their warm-up's order: the deepest stage first (the longest chain:
    it runs the operators of the stages below it), each (stage, impl) once, as a stage
    beside itself in another trigger mode is."""
    unique: dict[tuple[str, str], tuple[RunConfig, Settings]] = {}
    for run, settings in runs:
        unique.setdefault((run.stage, run.impl), (run, settings))
    return sorted(unique.values(), key=lambda r: deepest_first(r[0].stage))


def _alone(run: RunConfig, rate: float, seconds: float) -> RunConfig:
    """``run`` as its warm-up runs it: at ``rate`` for ``seconds``, without a warm-up,
    a lead-in or a fault, on the latency workload."""
    return replace(run, rate=rate, warmup_s=0.0, duration_s=seconds, fault=None,
                   workload="latency", lead_in_s=0.0)  # fmt: skip


def _warm_alone(
    application: Application,
    query: Query,
    run: RunConfig,
    bootstrap: str,
    console: Console,
    seconds: float,
) -> None:
    """One stage's ``query`` alone in ``application`` on its fresh topics for ``seconds``."""
    engine, publisher = query.job, query.publisher
    create_topics(bootstrap, query.topics.all, partitions=run.partitions, leader=run.leader,
                  replication=run.replication)  # fmt: skip
    try:
        with console.task("starting the warm-up query") as update:
            engine.start(run.ready_timeout_s, application.check, update)
        publisher.start()
        published = time.monotonic()
        with console.task("warming up the application", seconds) as update:
            while (now := time.monotonic()) < published + seconds:
                engine.check()
                if publisher.error:
                    raise publisher.error
                update(now - published, publisher.progress_line())
                time.sleep(0.2)
    finally:
        publisher.stop()
        publisher.wait(10)
        # the topics stay, as a run's do: Spark's Kafka consumers of a stopped query
        # can still be reading them, and on a deleted topic they retry for minutes,
        # holding the task slots the next query needs
        engine.stop(STOP_TIMEOUT_S)  # never raises: a stuck query stops the application
    if not application.running:
        raise EngineError("a warm-up query would not stop, so the application was stopped")


def describe_warm_up(record: dict[str, Any]) -> str:
    """A sentence on a suite's shared application and its warm-up."""
    return (
        "The Spark runs in micro-batches without a fault ran as queries of one shared Spark "
        "application, warmed up first: "
        f"{', '.join(record['stages'])} in turn, each alone at {record['rate']:,.0f} msg/s "
        f"for {record['seconds']:g} s, not measured."
    )


@dataclass(frozen=True)
class Warmth:
    """How one run of a suite (or probe of a search) stands to their warmed-up
    application: whether its query runs there, and so how long it must settle and what
    its warm-up record says."""

    application: Application | None
    """The application running the run's query; None for a job of its own."""
    warmed_up: dict[str, Any] | None
    """What warmed up the JIT and the broker before the run; None outside a suite or
    search with a shared application."""
    session: bool
    """Whether the run's engine has a session a suite's runs can share (Spark's
    application; the floor has none)."""

    @classmethod
    def of(cls, run: RunConfig, pipeline: PipelineConfig, app: Application | None) -> "Warmth":
        """A run without a fault on an engine with a session uses ``app`` if it still
        runs (else it went with a query that would not stop) and takes the run's
        settings."""
        session = run.runs_on().session is not None
        usable = session and app is not None and app.running and not run.fault
        return cls(
            app if usable and app is not None and app.accepts(pipeline) else None,
            app.warmed_up if app is not None else None,
            session,
        )

    def settling(self, run: RunConfig) -> tuple[float, float]:
        """The shortest warm-up and the settle window: in a warmed-up application (and
        for the floor after it) the JIT has compiled what the run runs, so what is left
        to settle is the query's own start: short windows and no minimum."""
        if self.warmed_up is not None and (self.application is not None or not self.session):
            return 0.0, run.warm_settle_window_s
        return run.shortest_warmup_s, run.settle_window_s

    def record(self, warm_up_began: float) -> dict[str, Any]:
        """The warm-up record's ``application``: the shared application the run's query
        ran in (its age when the warm-up began, what warmed it up); for a suite's run
        with a job of its own (the floor, a fault, another execution mode, other settings)
        what warmed up that application and the broker before it; nothing outside a
        suite with one."""
        if self.application is not None:
            age = round(self.application.age_s - (time.monotonic() - warm_up_began), 1)
            return {"application": {"shared": True, "age_s": age,
                                    "warmed_up": self.warmed_up}}  # fmt: skip
        if self.warmed_up is not None:
            return {"application": {"shared": False, "warmed_up": self.warmed_up}}
        return {}
