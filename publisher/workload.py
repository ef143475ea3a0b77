"""The workloads: one vocabulary for the publisher and the run (docs/method.md#workloads).

Each workload is named data with its own behaviour: the shape of its schedule
and whether its load is published as a backlog before the job starts. The
publisher asks it for the schedule, the run asks it how to order the job and
the publisher; nobody branches on a workload's name.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ground.errors import ConfigError
from publisher import schedule as s


@dataclass(frozen=True)
class Workload:
    name: str
    help: str
    backlog_first: bool
    """Its backlog is published before the job starts, and the job reads it from the
    earliest offset: the measured period begins when the job does, with no warm-up
    trimmed (the catch-up is what is measured)."""
    bursts: bool
    """Adds bursts on top of the base rate (how long latency stays inflated after each
    burst is what is measured)."""
    faulty: bool
    """Mixes malformed records into the stream at ``faulty_fraction``
    (:class:`publisher.faulty.FaultySource`): the pipeline must count and drop them and
    still produce every output of the valid ones."""
    shape: Callable[[s.Shape], s.Schedule]


WORKLOADS: Final[tuple[Workload, ...]] = (
    Workload(
        "latency",
        "a constant rate (400 msg/s in the papers' latency workload)",
        backlog_first=False,
        bursts=False,
        faulty=False,
        shape=lambda p: s.constant(
            p.pairs_per_s, p.tick_s, p.end_s, p.lead_in_s, p.lead_in_pairs_per_s
        ),
    ),
    Workload(
        "periodic-burst",
        "the constant rate plus a burst every burst_every_s seconds",
        backlog_first=False,
        bursts=True,
        faulty=False,
        shape=lambda p: s.periodic_burst(
            p.pairs_per_s, p.burst_pairs, p.burst_every_s, p.burst_duration_s, p.tick_s, p.end_s
        ),
    ),
    Workload(
        "single-burst",
        "a backlog of backlog_s seconds at backlog_rate before the job starts, then the rate",
        backlog_first=True,
        bursts=False,
        faulty=False,
        shape=lambda p: s.single_burst(
            p.pairs_per_s, p.backlog_pairs_per_s, p.backlog_s, p.tick_s, p.end_s
        ),
    ),
    Workload(
        "ramp",
        "one step of ramp_step_s seconds per rate of ramp_rates",
        backlog_first=False,
        bursts=False,
        faulty=False,
        shape=lambda p: s.ramp(p.ramp_pairs_per_s, p.ramp_step_s, p.tick_s, p.end_s),
    ),
    Workload(
        "faulty-event",
        "the constant rate plus malformed records, faulty_fraction of all, of nine kinds",
        backlog_first=False,
        bursts=False,
        faulty=True,
        shape=lambda p: s.constant(p.pairs_per_s, p.tick_s, p.end_s),
    ),
)
NAMES: Final[tuple[str, ...]] = tuple(w.name for w in WORKLOADS)
_BY_NAME: Final = {w.name: w for w in WORKLOADS}


def workload(name: str) -> Workload:
    """The workload called ``name``; ConfigError naming the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ConfigError(f"unknown workload {name!r} (workloads: {', '.join(NAMES)})") from None
