"""The synthetic NDW data model: deterministic per seed, distinct locations, plausible values."""

import statistics

import pytest

from publisher.model import (
    MINUTES_PER_DAY,
    demand,
    location_stream,
    locations_for_lanes,
    make_locations,
    observe,
)

# Generous box around the Netherlands (mainland).
NL_LAT = (50.75, 53.55)
NL_LON = (3.35, 7.25)


def observations(locations, minute, seed=7):
    d = demand(minute)
    return [
        observe(loc, lane, minute, seed, d)
        for loc in locations
        for lane in range(1, loc.num_lanes + 1)
    ]


def test_same_seed_same_locations_and_values():
    assert make_locations(50, seed=3) == make_locations(50, seed=3)
    a, b = make_locations(20, seed=3), make_locations(20, seed=3)
    assert observations(a, 480) == observations(b, 480)


def test_other_seed_other_locations():
    ids = {loc.location_id for loc in make_locations(50, seed=1)}
    other = {loc.location_id for loc in make_locations(50, seed=2)}
    assert len(ids & other) < 5


def test_spatial_scaling_adds_distinct_locations():
    small, large = make_locations(100, seed=9), make_locations(3000, seed=9)
    assert large[:100] == small
    assert len({loc.location_id for loc in large}) == 3000
    assert len({(loc.latitude, loc.longitude) for loc in large}) == 3000
    assert [loc.index for loc in large] == list(range(3000))


def test_location_ids_look_like_ndw():
    for loc in make_locations(200, seed=4):
        assert loc.location_id.startswith("RWS01_MONIBAS_")
        assert len(loc.location_id) == len("RWS01_MONIBAS_0021hrl0414ra")


def test_locations_lie_in_the_netherlands_with_1_to_5_lanes():
    locs = make_locations(2000, seed=5)
    assert all(NL_LAT[0] < loc.latitude < NL_LAT[1] for loc in locs)
    assert all(NL_LON[0] < loc.longitude < NL_LON[1] for loc in locs)
    assert {loc.num_lanes for loc in locs} == {1, 2, 3, 4, 5}


def test_lane_range_is_respected():
    assert {loc.num_lanes for loc in make_locations(300, seed=5, lanes=(2, 3))} == {2, 3}
    with pytest.raises(ValueError):
        next(location_stream(1, (0, 3)))


@pytest.mark.parametrize("total", [1, 7, 200, 2500])
def test_locations_for_lanes_is_exact_and_a_prefix(total):
    locs = locations_for_lanes(total, seed=11)
    assert sum(loc.num_lanes for loc in locs) == total
    stream = make_locations(len(locs), seed=11)
    assert [loc.location_id for loc in locs] == [loc.location_id for loc in stream]
    assert locs[:-1] == stream[:-1]


def test_demand_has_rush_hours_and_quiet_nights():
    assert demand(3 * 60) < 0.15
    assert demand(8 * 60) > 0.9
    assert demand(17 * 60 + 15) > 0.9
    assert 0.4 < demand(12 * 60) < 0.8
    assert all(0 < demand(m) <= 1 for m in range(MINUTES_PER_DAY))


def test_values_are_plausible_and_congestion_dips_at_rush_hour():
    locs = make_locations(300, seed=8)
    night, noon, rush = (observations(locs, m) for m in (3 * 60, 12 * 60, 8 * 60))
    for obs in night + noon + rush:
        assert 5 <= obs.speed <= 150
        assert 1 <= obs.flow <= 45  # vehicles per lane-minute: at most ~2 700 veh/h
        assert 80 <= obs.accuracy <= 100
    assert statistics.median(o.flow for o in night) <= 4
    assert statistics.median(o.flow for o in rush) > 3 * statistics.median(o.flow for o in night)
    assert 90 < statistics.median(o.speed for o in night) < 135
    congested = [o for o in rush if o.speed < 60]
    assert 0.05 * len(rush) < len(congested) < 0.6 * len(rush)
    assert sum(o.speed < 60 for o in noon) < 0.02 * len(noon)


def test_speed_limit_bounds_free_flow_speed():
    for loc in make_locations(200, seed=2):
        for lane in range(1, loc.num_lanes + 1):
            obs = observe(loc, lane, 180, 2, demand(180))
            assert obs.speed <= loc.speed_limit * 1.1


def test_values_vary_between_minutes_and_lanes():
    loc = next(loc for loc in make_locations(50, seed=1) if loc.num_lanes >= 3)
    per_minute = {observe(loc, 1, m, 1, demand(m)).speed for m in range(600, 660)}
    assert len(per_minute) > 30
    per_lane = {observe(loc, lane, 600, 1, demand(600)) for lane in range(1, loc.num_lanes + 1)}
    assert len(per_lane) == loc.num_lanes
