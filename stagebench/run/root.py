"""The composition root of a run: the one place that builds what a run is made of and
hands each part what it needs.

:func:`execute` checks a run's settings, resolves its Kafka
(:mod:`stagebench.run.bootstrap`, which may start the embedded broker) and wires the run
(:class:`stagebench.run.runner.Run`): its roles' configurations, its job, its publisher
thread, its health monitor, the broker's clock, its samples of the machine, its waits
and its fault. :func:`shared_application` resolves the Kafka of the application a
suite's or a search's runs share and hands its warm-up (:mod:`stagebench.run.warmup`)
the way to build each query it runs alone (:func:`warm_query`). Nothing else
constructs these parts.
"""

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ground import files, rundir
from ground.kafka.naming import RunTopics, new_run_id
from publisher.producer import file_source
from publisher.source import Source
from publisher.workload import workload
from stagebench.config.layers import Settings
from stagebench.config.roles import assemble, publisher_config, validate
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.run import warmup
from stagebench.run.application import Application
from stagebench.run.bootstrap import resolve
from stagebench.run.broker_clock import BrokerClock
from stagebench.run.faults import FaultInjector, restartable_broker
from stagebench.run.health import HealthMonitor
from stagebench.run.job import Job
from stagebench.run.publisher import PublisherThread
from stagebench.run.runner import Run, RunResult
from stagebench.run.sampling import RunResources
from stagebench.run.waiting import Waiter


def execute(
    run: RunConfig,
    settings: Settings,
    console: Console | None = None,
    application: Application | None = None,
) -> RunResult:
    """Run one stage end to end; the run directory and its summary. ``application``: a
    suite's or a capacity search's shared Spark application, which runs the query when it can
    (:meth:`Application.accepts`) and no fault is injected."""
    console = console or Console()
    # before a broker is started: settings that cannot run, results that cannot be
    # written, a replay file that cannot be read or breaks the contract
    validate(run, settings)
    files.writable_dir(Path(run.results_dir))
    run_id = new_run_id()
    replay = file_source(publisher_config(run, settings, RunTopics.for_run(run_id)))
    bootstrap = resolve(run.bootstrap)
    run_dir = Path(run.results_dir) / rundir.dir_name(run.stage, run_id)
    prepared = wire(run, settings, bootstrap, run_id, run_dir, console, application, replay)
    run_dir.mkdir(parents=True)
    return prepared.execute()


def wire(
    run: RunConfig,
    settings: Settings,
    bootstrap: str,
    run_id: str,
    run_dir: Path,
    console: Console,
    application: Application | None = None,
    replay: Source | None = None,
) -> Run:
    """One run's parts, each given what it needs, in a :class:`Run` ready to execute."""
    load, topics = workload(run.workload), RunTopics.for_run(run_id)
    # every configuration is built and validated before anything starts
    config = assemble(run, settings, bootstrap, run_id, run_dir, topics)
    warmth = warmup.Warmth.of(run, config.pipeline, application)
    job = Job(run_dir, config.pipeline, warmth.application)
    publisher = PublisherThread(bootstrap, config.publisher, replay)
    health = HealthMonitor(bootstrap, topics, job, publisher)
    clock = BrokerClock(bootstrap, topics.inputs, health.check)
    machine = RunResources(lambda: [job.pid] if job.pid else [], lambda: list(health.broker_pids))
    wait = Waiter(console, health.check, publisher.progress_line)
    # a broker fault needs a broker it can restart: refused before anything starts
    broker = restartable_broker(run, bootstrap)
    injector = FaultInjector(run, console, job, health, clock, wait, broker)
    return Run(
        run, settings, bootstrap, run_id, run_dir, console, load, topics,
        config, warmth, job, publisher, health, clock, machine, wait, injector,
    )  # fmt: skip


def shared_application(
    parent: Path,
    runs: list[tuple[RunConfig, Settings]],
    base: RunConfig,
    console: Console,
    owner: str,
) -> AbstractContextManager[tuple[Application | None, dict[str, Any] | None]]:
    """The Spark application ``runs`` share, warmed up, on the Kafka ``base`` names
    (:func:`stagebench.run.warmup.shared_application`)."""
    bootstrap = resolve(base.bootstrap)
    return warmup.shared_application(parent, runs, base, console, owner, bootstrap, warm_query)


def warm_query(
    run: RunConfig,
    settings: Settings,
    bootstrap: str,
    query_id: str,
    query_dir: Path,
    application: Application,
) -> warmup.Query:
    """A query the shared application's warm-up runs alone: its fresh topics, its job in
    ``application`` and the publisher of its load."""
    topics = RunTopics.for_run(query_id)
    config = assemble(run, settings, bootstrap, query_id, query_dir, topics)
    job = Job(query_dir, config.pipeline, application)
    return warmup.Query(topics, job, PublisherThread(bootstrap, config.publisher))
