"""Rate ⇄ locations ⇄ time scale, configuration checks, and what one tick publishes."""

import math

import pytest

from ground import contract as schema
from ground.config import from_mapping
from ground.errors import ConfigError
from publisher.codec import check, decode
from publisher.config import PublisherConfig
from publisher.sizing import LocationPool, derive, lanes_for_rate, rate_for_lanes, schedule
from publisher.source import SyntheticSource
from tests.publisher.ticks import messages_per_tick


def test_rate_formula_both_ways():
    assert lanes_for_rate(400, 1.0) == 200
    assert rate_for_lanes(200, 1.0) == 400
    assert lanes_for_rate(5000, 2.0) == 1250
    assert lanes_for_rate(1, 1.0) == 1


@pytest.mark.parametrize("rate", [400, 5000, 1234])
def test_rate_derives_locations_with_exactly_the_lanes_needed(rate):
    sizing = derive(PublisherConfig(rate=rate))
    assert sizing.lanes == rate // 2
    assert sizing.rate == rate
    assert sizing.derived == "locations"
    assert f"{rate} msg/s" in sizing.describe()


def test_locations_derive_the_rate():
    sizing = derive(PublisherConfig(locations=10, time_scale=2.0))
    assert sizing.locations == 10
    assert sizing.rate == 2 * sizing.lanes * 2.0
    assert sizing.derived == "rate"


def test_default_is_the_latency_workload_rate():
    assert derive(PublisherConfig()).rate == 400


def test_odd_rate_is_rounded_to_whole_lanes():
    assert derive(PublisherConfig(rate=401)).rate in (400, 402)


@pytest.mark.parametrize(
    "values",
    [
        {"rate": 400, "locations": 10},
        {"rate": -1},
        {"workload": "sawtooth"},
        {"workload": "ramp"},
        {"acks": "2"},
        {"min_lanes": 4, "max_lanes": 2},
        {"speed_topic": "x", "flow_topic": "x"},
        {"time_scale": 0},
        {"burst_every_s": 1, "burst_duration_s": 2},
        {"lead_in_s": -1},
        {"lead_in_s": 10, "workload": "periodic-burst"},
        {"lead_in_s": 10, "lead_in_share": 0},
        {"colour": "red"},
    ],
)
def test_bad_configuration_is_refused(values):
    with pytest.raises(ConfigError):
        from_mapping(PublisherConfig, values, "publisher")


def test_config_from_mapping_accepts_lists_and_derives_run_length():
    config = from_mapping(
        PublisherConfig, {"workload": "ramp", "ramp_rates": [400, 800]}, "publisher"
    )
    assert config.ramp_rates == (400, 800)
    assert config.end_s == 20
    assert PublisherConfig().end_s == 60
    assert PublisherConfig(workload="single-burst", backlog_s=30).end_s == 90
    assert PublisherConfig(max_messages=10).end_s == math.inf


def test_lead_in_publishes_a_share_of_the_lanes_then_all():
    config = PublisherConfig(rate=400, lead_in_s=2, lead_in_share=0.25, duration_s=4)
    assert messages_per_tick(schedule(config, derive(config)), 4) == [100, 100, 400, 400]


def test_pool_grows_with_distinct_locations_after_the_base():
    config = PublisherConfig(rate=400)
    pool = LocationPool(config)
    assert len(pool.encoders) == 200
    pool.ensure(5000)
    ids = [loc.location_id for loc in pool.locations]
    assert len(ids) == len(set(ids))
    assert len(pool.encoders) >= 5000


def publish_ticks(config, ticks):
    """What a SyntheticSource produces for the first ticks: (topic, decoded value, key)."""
    source = SyntheticSource(config, derive(config))
    out = []
    for tick in range(ticks):
        offsets = source.offsets(tick)
        for i, due in enumerate(offsets):
            source.send(
                lambda topic, value, key: out.append((topic, value, key)),
                tick,
                i,
                1_000_000 + 1000 * tick,
                1_000_000 + int(due * 1000),
            )
    return out


def test_one_tick_covers_every_lane_once_with_twins():
    config = PublisherConfig(rate=400, speed_topic="s", flow_topic="f")
    out = publish_ticks(config, 3)
    assert len(out) == 3 * 400
    for tick in range(3):
        ticks = [(t, decode(v)) for t, v, _ in out[tick * 400 : (tick + 1) * 400]]
        speeds = {(m[schema.LOCATION_ID], m[schema.LANE]) for t, m in ticks if t == "s"}
        flows = {(m[schema.LOCATION_ID], m[schema.LANE]) for t, m in ticks if t == "f"}
        assert speeds == flows and len(speeds) == 200
        assert {m[schema.OBSERVATION_TS] for _, m in ticks} == {1_000_000 + 1000 * tick}


def test_values_are_valid_keyed_by_location_and_sequences_gap_free():
    out = publish_ticks(PublisherConfig(rate=400, speed_topic="s", flow_topic="f"), 4)
    seqs: dict[tuple[str, str], list[int]] = {}
    for i in range(0, len(out), 2):
        (t1, v1, k1), (t2, v2, k2) = out[i], out[i + 1]
        assert (t1, t2) == ("s", "f") and k1 == k2
        assert check(v1) == [] and check(v2) == []
        m1, m2 = decode(v1), decode(v2)
        assert m1[schema.SEQ] == m2[schema.SEQ]
        assert m1[schema.SCHEDULED_TS] >= m1[schema.OBSERVATION_TS]
        assert k1.decode() == m1[schema.LOCATION_ID]
        for topic, m in (("s", m1), ("f", m2)):
            seqs.setdefault((topic, m[schema.LOCATION_ID]), []).append(m[schema.SEQ])
    for found in seqs.values():
        assert found == list(range(len(found)))


def test_same_seed_publishes_the_same_data():
    config = PublisherConfig(rate=100, seed=5)
    assert publish_ticks(config, 2) == publish_ticks(config, 2)
    assert publish_ticks(config, 2) != publish_ticks(PublisherConfig(rate=100, seed=6), 2)


def _whole_locations_per_tick(ticks):
    """Every tick (a list of sends) has all lanes of each location, in both topics."""
    for tick in ticks:
        lanes: dict[tuple[str, str], set[int]] = {}
        num_lanes = {}
        for topic, value, _ in tick:
            m = decode(value)
            lanes.setdefault((topic, m[schema.LOCATION_ID]), set()).add(m[schema.LANE])
            num_lanes[m[schema.LOCATION_ID]] = m[schema.NUM_LANES]
        for (_, loc), seen in lanes.items():
            assert seen == set(range(1, num_lanes[loc] + 1)), loc


def _by_tick(config, ticks):
    sizes = messages_per_tick(schedule(config, derive(config)), ticks)
    out = publish_ticks(config, ticks)
    starts = [sum(sizes[:k]) for k in range(ticks + 1)]
    assert len(out) == starts[-1]
    return sizes, [out[starts[k] : starts[k + 1]] for k in range(ticks)]


def test_burst_ticks_use_extra_whole_locations():
    config = PublisherConfig(
        rate=100, workload="periodic-burst", burst_messages=1000, burst_every_s=2
    )
    sizes, ticks = _by_tick(config, 3)
    assert sizes[:2] == [100, 100]
    # 1000 messages rounded up to whole locations (at most 5 lanes each)
    assert 1100 <= sizes[2] < 1100 + 2 * 5
    burst = [decode(v) for _, v, _ in ticks[2]]
    lanes = [(m[schema.LOCATION_ID], m[schema.LANE]) for m in burst]
    assert len(lanes) == sizes[2] and len(set(lanes)) == sizes[2] // 2
    _whole_locations_per_tick(ticks)


def test_burst_spread_over_several_ticks_ends_each_on_a_whole_location():
    config = PublisherConfig(
        rate=100, time_scale=2.0, workload="periodic-burst", burst_messages=999,
        burst_every_s=2, burst_duration_s=1.0,
    )  # fmt: skip
    sizes, ticks = _by_tick(config, 7)  # ticks of 0.5 s: the burst fills ticks 4 and 5
    base = sizes[0]  # 100 msg/s at 2 data minutes per second: 50 per tick
    assert sizes[4] == sizes[5] > sizes[3] == sizes[6] == base == 50
    assert sizes[4] + sizes[5] - 2 * base >= 999
    _whole_locations_per_tick(ticks)
