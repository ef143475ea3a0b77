"""Synthetic NDW-style measurement locations and their one-minute lane observations.

The NDW network reports, per measurement location and lane, the number of
vehicles (flow) and their average speed over each minute. This module makes a
plausible, deterministic stand-in: :func:`make_locations` draws locations from
one seeded stream (so ``n`` locations are always the first ``n`` of ``n + k``:
spatial scaling adds distinct locations, never copies), and :func:`observe`
is a pure function of (seed, location, lane, minute of day), so a run is
reproducible whatever its pacing.
"""

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace

MINUTES_PER_DAY = 1440

# Dutch motorways (A-road numbers) that carry MONIBAS loop detectors.
_ROADS = (1, 2, 4, 7, 9, 10, 12, 13, 15, 16, 20, 27, 28, 30, 35, 50, 58, 59, 65, 67, 73, 76, 79)

# Boxes that lie on Dutch land, as (lat_min, lat_max, lon_min, lon_max); a box
# around the whole country would put detectors in the North Sea and Germany.
_LAND_BOXES = (
    (51.50, 52.00, 4.40, 5.90),
    (52.00, 52.45, 4.75, 6.60),
    (52.45, 53.15, 5.90, 6.85),
    (51.30, 51.50, 5.10, 5.90),
)

_SPEED_LIMITS = (80, 100, 100, 120, 130, 130)
_LANE_WEIGHTS = {1: 1, 2: 5, 3: 4, 4: 2, 5: 1}


@dataclass(frozen=True)
class Location:
    """One measurement location: what NDW publishes about it, plus hidden traffic traits."""

    index: int
    location_id: str
    latitude: float
    longitude: float
    num_lanes: int
    speed_limit: int
    lane_capacity: float
    """Vehicles per minute one lane carries at capacity (about 1 800–2 200 veh/h)."""
    peak_load: float
    """Demand at the daily peak relative to capacity; above ~0.9 the location jams."""


@dataclass(frozen=True)
class Observation:
    """One lane's one-minute aggregate."""

    speed: float
    """Average speed, km/h, one decimal."""
    flow: int
    """Vehicles in the minute."""
    accuracy: float
    """Share of the minute the detector reported, percent."""


def make_locations(count: int, seed: int, lanes: tuple[int, int] = (1, 5)) -> list[Location]:
    """The first ``count`` locations of the seeded stream."""
    stream = location_stream(seed, lanes)
    return [next(stream) for _ in range(count)]


def locations_for_lanes(
    total_lanes: int, seed: int, lanes: tuple[int, int] = (1, 5)
) -> list[Location]:
    """The shortest prefix of the stream with exactly ``total_lanes`` lanes.

    The last location is given fewer lanes when needed, so a rate derived from
    a lane count is met exactly.
    """
    result: list[Location] = []
    have = 0
    stream = location_stream(seed, lanes)
    while have < total_lanes:
        loc = next(stream)
        if have + loc.num_lanes > total_lanes:
            loc = replace(loc, num_lanes=total_lanes - have)
        result.append(loc)
        have += loc.num_lanes
    return result


def location_stream(seed: int, lanes: tuple[int, int] = (1, 5)) -> Iterator[Location]:
    """Endless, deterministic sequence of distinct locations."""
    low, high = lanes
    if not 1 <= low <= high <= 5:
        raise ValueError(f"lanes must satisfy 1 <= min <= max <= 5, got {lanes}")
    rng = random.Random(seed)
    lane_choices = [n for n in range(low, high + 1)]
    lane_weights = [_LANE_WEIGHTS[n] for n in lane_choices]
    seen: set[str] = set()
    index = 0
    while True:
        road = rng.choice(_ROADS)
        side = rng.choice("lr")
        hectometre = rng.randrange(10_000)
        suffix = rng.choice(("ra", "rb"))
        location_id = f"RWS01_MONIBAS_{road:03d}1hr{side}{hectometre:04d}{suffix}"
        box = rng.choices(_LAND_BOXES, weights=(4, 4, 3, 1))[0]
        lat = round(rng.uniform(box[0], box[1]), 6)
        lon = round(rng.uniform(box[2], box[3]), 6)
        num_lanes = rng.choices(lane_choices, weights=lane_weights)[0]
        limit = rng.choice(_SPEED_LIMITS)
        capacity = rng.uniform(30.0, 36.0)
        peak = rng.uniform(0.5, 1.05)
        if location_id in seen:  # redraw; the stream stays deterministic
            continue
        seen.add(location_id)
        yield Location(index, location_id, lat, lon, num_lanes, limit, capacity, peak)
        index += 1


def demand(minute_of_day: int) -> float:
    """Network-wide demand relative to the daily peak: night low, morning and evening rush."""
    m = minute_of_day % MINUTES_PER_DAY
    morning = math.exp(-(((m - 8 * 60) / 55.0) ** 2))
    evening = math.exp(-(((m - 17 * 60 - 15) / 70.0) ** 2))
    daytime = (
        0.55
        / (1.0 + math.exp(-(m - 6 * 60 - 30) / 25.0))
        / (1.0 + math.exp((m - 20 * 60 - 30) / 40.0))
    )
    return min(1.0, 0.06 + daytime + 0.45 * morning + 0.5 * evening)


def _noise(seed: int, index: int, lane: int, minute: int, salt: int) -> float:
    """Uniform [0, 1) from a hash of ints (deterministic: int hashing is not randomised)."""
    return (hash((seed, index, lane, minute, salt)) & 0xFFFFFFFF) / 4294967296.0


def observe(
    location: Location, lane: int, minute: int, seed: int, day_demand: float
) -> Observation:
    """Flow and speed of ``lane`` (1-based) of ``location`` in data minute ``minute``.

    ``day_demand`` is :func:`demand` of that minute, passed in because every
    lane of every location shares it.
    """
    idx = location.index
    # outer lanes carry more of the traffic at low demand, inner lanes are faster
    lane_pos = (lane - 0.5) / location.num_lanes
    load = day_demand * location.peak_load * (1.1 - 0.2 * lane_pos)
    load *= 0.9 + 0.2 * _noise(seed, idx, lane, minute, 1)
    capacity = location.lane_capacity
    if load > 0.92:
        # congestion: the queue discharges below capacity and speed collapses
        severity = min(1.0, (load - 0.92) / 0.25)
        flow = capacity * (0.85 - 0.25 * severity)
        speed = location.speed_limit * (0.6 - 0.42 * severity)
    else:
        flow = capacity * load
        speed = location.speed_limit * (1.02 - 0.12 * load * load) * (0.94 + 0.08 * lane_pos)
    speed *= 0.96 + 0.08 * _noise(seed, idx, lane, minute, 2)
    flow_count = max(1, round(flow * (0.9 + 0.2 * _noise(seed, idx, lane, minute, 3))))
    gap = _noise(seed, idx, lane, minute, 4)
    accuracy = 100.0 if gap < 0.9 else float(80 + int(gap * 200) % 20)
    return Observation(round(max(speed, 5.0), 1), flow_count, accuracy)
