"""The warm-up of a suite's shared Spark application, before any of its runs.

HotSpot compiles a method once it has run often enough, and a JVM that has compiled
what a query runs keeps it: a run of a warmed-up application starts where a job of
its own would be only after minutes (docs/method.md#one-application-per-suite). So
the suite first runs every Spark stage it will measure at once, in the application,
on one pair of input topics published at a multiple of the rate (more rows per
micro-batch for the operators' generated code) for a fixed time, and measures nothing
of it. Each stage then runs in turn, in the same application, with fresh topics and
checkpoint, and warms up by the settle rule with the short windows of a warm JVM.
"""

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ground.errors import SparkError
from ground.kafka.naming import RunTopics, new_run_id
from ground.kafka.topics import create_topics
from stagebench.application import Application
from stagebench.console import Console
from stagebench.engine import Engine
from stagebench.publisher_thread import PublisherThread
from stagebench.run_config import assemble
from stagebench.settings import RunConfig, Settings

STOP_TIMEOUT_S = 60.0


def warm_up(
    application: Application,
    runs: list[tuple[RunConfig, Settings]],
    bootstrap: str,
    console: Console,
) -> dict[str, Any]:
    """Run every query of ``runs`` at once in ``application`` for the first run's
    ``app_warmup_s`` at ``app_warmup_rate`` times its rate; what was done, for each run's
    conditions (``application`` in its warm-up record)."""
    first = runs[0][0]
    rate, seconds = first.rate * first.app_warmup_rate, first.app_warmup_s
    warm_id = new_run_id()
    inputs = RunTopics.for_run(warm_id)
    root = application.dir / f"warmup-{warm_id}"
    engines, outputs = [], []
    publisher = None
    for run, settings in runs:
        own_id = new_run_id()
        topics = replace(inputs, output=RunTopics.for_run(own_id).output)
        warm = replace(run, rate=rate, warmup_s=0.0, duration_s=seconds, fault=None,
                       workload="latency", lead_in_s=0.0)  # fmt: skip
        run_dir = root / f"{run.stage}-{run.impl}-{own_id}"
        roles = assemble(warm, settings, bootstrap, own_id, run_dir, topics)
        if publisher is None:
            publisher = PublisherThread(bootstrap, roles.publisher)
        engines.append(Engine(run_dir, roles.pipeline, application))
        outputs.append(topics.output)
    assert publisher is not None
    names = [*inputs.inputs, *outputs]
    create_topics(bootstrap, names, partitions=first.partitions, leader=first.leader,
                  replication=first.replication)  # fmt: skip
    stages = ", ".join(f"{run.stage} ({run.impl})" for run, _ in runs)
    console.step(
        f"warming up the shared Spark application: {stages} at once, {rate:,.0f} msg/s "
        f"({first.app_warmup_rate:g} × the rate) for {seconds:g} s, not measured"
    )
    began = time.monotonic()
    try:
        with console.task("starting the warm-up queries") as update:
            for engine in engines:
                engine.start(first.ready_timeout_s, application.check, update)
        publisher.start()
        published = time.monotonic()
        with console.task("warming up the application", seconds) as update:
            while (now := time.monotonic()) < published + seconds:
                for engine in engines:
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
        for engine in engines:
            engine.stop(STOP_TIMEOUT_S)  # never raises: a stuck query stops the application
    if not application.running:
        raise SparkError("a warm-up query would not stop, so the application was stopped")
    record = {
        "stages": [f"{run.stage}/{run.impl}" for run, _ in runs],
        "rate": rate,
        "seconds": seconds,
        "took_s": round(time.monotonic() - began, 1),
        "dir": str(Path(root)),
    }
    application.warmed_up = record
    return record


def describe_warm_up(record: dict[str, Any]) -> str:
    """A sentence on a suite's shared application and its warm-up."""
    return (
        "The Spark runs in micro-batches without a fault ran as queries of one shared Spark "
        "application, warmed up first: "
        f"{', '.join(record['stages'])} at once, {record['rate']:,.0f} msg/s for "
        f"{record['seconds']:g} s, not measured."
    )
