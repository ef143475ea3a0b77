"""Rate, locations and time scale: one follows from the other two.

Every lane of every location reports one speed and one flow observation per
data minute, so::

    messages/s = 2 × lanes in total × data minutes per second

Given a rate, the lanes are derived (rounded to a whole lane, so the rate
actually used may differ slightly: :attr:`Sizing.rate` is what is published)
and the locations are the shortest prefix of the seeded location stream with
that many lanes. Given locations, the rate follows. Ticks that need more pairs
than the base locations have lanes (bursts, backlogs, ramp steps) draw further
locations from the same stream (:class:`LocationPool`): spatial scaling adds
distinct locations, it never repeats one within a tick.
"""

import logging
import math
from dataclasses import dataclass
from itertools import islice

from publisher import schedule as shapes
from publisher.codec import LaneEncoder
from publisher.config import DEFAULT_RATE, PublisherConfig
from publisher.model import Location, location_stream, locations_for_lanes, make_locations
from publisher.workload import workload

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sizing:
    locations: int
    lanes: int
    rate: float
    """Base messages/s actually published (both topics)."""
    time_scale: float
    derived: str
    """Which of rate or locations was derived: "locations" or "rate"."""

    def describe(self) -> str:
        return (
            f"{self.locations} locations with {self.lanes} lanes at {self.time_scale:g} data "
            f"minute(s)/s = {self.rate:g} msg/s (2 × lanes × minutes/s; {self.derived} derived)"
        )


def lanes_for_rate(rate: float, time_scale: float) -> int:
    return max(1, round(rate / (2.0 * time_scale)))


def rate_for_lanes(lanes: int, time_scale: float) -> float:
    return 2.0 * lanes * time_scale


def base_locations(config: PublisherConfig) -> list[Location]:
    lanes = (config.min_lanes, config.max_lanes)
    if config.locations is not None:
        return make_locations(config.locations, config.seed, lanes)
    rate = DEFAULT_RATE if config.rate is None else config.rate
    return locations_for_lanes(lanes_for_rate(rate, config.time_scale), config.seed, lanes)


def derive(config: PublisherConfig) -> Sizing:
    locs = base_locations(config)
    lanes = sum(loc.num_lanes for loc in locs)
    return Sizing(
        locations=len(locs),
        lanes=lanes,
        rate=rate_for_lanes(lanes, config.time_scale),
        time_scale=config.time_scale,
        derived="rate" if config.locations is not None else "locations",
    )


def schedule(config: PublisherConfig, sizing: Sizing) -> shapes.Schedule:
    """The workload's schedule; base pairs per tick equal the base lanes exactly."""
    chosen = workload(config.workload)
    pairs = burst_pairs(config, sizing) if chosen.bursts else 0
    if chosen.bursts and 2 * pairs != config.burst_messages:
        log.info(
            "burst of %d messages rounded up to %d (whole locations)",
            config.burst_messages,
            2 * pairs,
        )
    shape = shapes.Shape(
        pairs_per_s=sizing.rate / 2.0,
        tick_s=config.tick_s,
        end_s=config.end_s,
        burst_pairs=pairs,
        burst_every_s=config.burst_every_s,
        burst_duration_s=config.burst_duration_s,
        backlog_pairs_per_s=config.backlog_rate / 2.0,
        backlog_s=config.backlog_s,
        ramp_pairs_per_s=tuple(r / 2.0 for r in config.ramp_rates),
        ramp_step_s=config.ramp_step_s,
        lead_in_s=config.lead_in_s,
        lead_in_pairs_per_s=sizing.rate / 2.0 * config.lead_in_share,
    )
    return chosen.shape(shape)


def burst_pairs(config: PublisherConfig, sizing: Sizing) -> int:
    """Pairs per periodic burst: ``burst_messages`` rounded up to whole locations.

    A burst tick publishes the base lanes and then the next lanes of the pool
    (:class:`LocationPool`); a burst ending inside a location would leave that
    location with only some of its lanes for that data minute (a partial
    window). The pairs are rounded up so each burst tick ends on a location
    boundary: per tick when the bursts start on tick boundaries and last one
    tick or a whole number of ticks (a burst's ticks are then equal), else per
    burst (best effort: one tick's share may still end inside a location).
    """
    pairs = math.ceil(config.burst_messages / 2)
    if pairs <= 0:
        return 0
    burst_ticks = config.burst_duration_s / config.tick_s
    starts_on_ticks = _whole(config.burst_every_s / config.tick_s)
    if not starts_on_ticks or burst_ticks <= 1 + 1e-6 or not _whole(burst_ticks):
        # one tick (rounded per tick), or no whole ticks (rounded per burst)
        return _whole_locations(config, sizing, pairs)
    n = round(burst_ticks)
    return n * _whole_locations(config, sizing, math.ceil(pairs / n))


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-6


def _whole_locations(config: PublisherConfig, sizing: Sizing, pairs: int) -> int:
    """The lanes of the fewest pool locations after the base that have ``pairs`` lanes."""
    stream = islice(
        location_stream(config.seed, (config.min_lanes, config.max_lanes)), sizing.locations, None
    )
    lanes = 0
    for loc in stream:
        lanes += loc.num_lanes
        if lanes >= pairs:
            break
    return lanes


class LocationPool:
    """Lanes in publishing order, grown from the location stream on demand.

    Slot ``i`` of a tick is the ``i``-th (location, lane) of the pool; the base
    locations come first, so at the base rate every tick covers exactly the
    base locations' lanes. Each location keeps one sequence counter shared by
    its two topics: twins are sent together, so both topics count alike.
    """

    def __init__(self, config: PublisherConfig) -> None:
        self._config = config
        base = base_locations(config)
        self._stream = islice(
            location_stream(config.seed, (config.min_lanes, config.max_lanes)), len(base), None
        )
        self.locations: list[Location] = []
        self.slot_location: list[int] = []
        """Slot -> index into ``locations``."""
        self.slot_lane: list[int] = []
        self.encoders: list[LaneEncoder] = []
        self.seq: list[int] = []
        """Next sequence number per location."""
        for loc in base:
            self._add(loc)

    def _add(self, loc: Location) -> None:
        self.locations.append(loc)
        self.seq.append(0)
        for lane in range(1, loc.num_lanes + 1):
            self.slot_location.append(len(self.locations) - 1)
            self.slot_lane.append(lane)
            self.encoders.append(
                LaneEncoder(loc.location_id, lane, loc.latitude, loc.longitude, loc.num_lanes)
            )

    def ensure(self, slots: int) -> None:
        """Grow until the pool has at least ``slots`` lanes."""
        while len(self.encoders) < slots:
            self._add(next(self._stream))
