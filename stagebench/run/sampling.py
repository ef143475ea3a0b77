"""What a run measures of the machine beside the latency: the CPU and memory of each
process of the run, sampled every second (:mod:`stagebench.resources.sampler`) into
``resources.csv``, and the host's pace before the run loads it and after the job has
stopped (:mod:`stagebench.resources.pace`); their summary goes into summary.json, and
what they say against the run's numbers into its warnings."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ground.kafka.local import LocalBroker
from stagebench.resources import pace
from stagebench.resources import sampler as resources
from stagebench.resources import summary as resource_summary


class RunResources:
    """The run's sampler: the job's process tree, the broker's and this process."""

    def __init__(
        self, engine_pids: Callable[[], list[int]], broker_pids: Callable[[], list[int]]
    ) -> None:
        self.sampler = resources.ResourceSampler(
            {
                # every process of the job: the driver, its JVM, Python workers
                "engine": resources.Group(engine_pids),
                "broker": resources.Group(broker_pids),
                # this process: the publisher and the output watcher (the job is its child)
                "bench": resources.Group(lambda: [os.getpid()], recursive=False),
            }
        )
        self.pace_before_ms: float | None = None

    def measure_pace(self) -> None:
        """The host's speed before anything of the run loads it (only the broker idles)."""
        self.pace_before_ms = pace.measure()

    def start(self) -> None:
        self.sampler.start()

    def stop(
        self, csv: Path, start_ms: int | None, end_ms: int | None, broker: LocalBroker | None
    ) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """Stop sampling once the job has stopped, measure the host's pace after it and
        write the samples to ``csv``; the summary of the measured period (``start_ms`` to
        ``end_ms``, read on this machine's clock: the broker's when it runs here, otherwise
        off by their skew, small beside one-second samples) and the warnings it gives."""
        samples = self.sampler.stop()
        pace_after_ms = pace.measure()
        resources.write_csv(csv, samples)
        machine_pace = pace.section(self.pace_before_ms, pace_after_ms)
        summary = resource_summary.run_summary(
            samples,
            start_ms,
            end_ms,
            self.sampler.cores,
            machine_pace,
            broker.describe() if broker else {"kind": "remote"},
        )
        warnings = resource_summary.machine_warnings(summary) + pace.run_warnings(machine_pace)
        return summary, warnings
