"""Schedules of every workload shape, as pure functions of time."""

import itertools
import math

import pytest

from publisher import schedule as workload
from publisher.schedule import Bursts, Steady
from tests.publisher.ticks import messages_per_tick


def test_steady_spaces_pairs_evenly_and_counts_exactly():
    s = Steady(0.0, 10.0, 200.0)
    times = s.offsets(0.0, 1.0)
    assert len(times) == 200
    assert times[0] == 0.0
    assert times[1] == pytest.approx(0.005)
    assert len(s.offsets(0.0, 10.0)) == 2000
    assert s.offsets(10.0, 11.0) == []


def test_steady_never_loses_or_doubles_pairs_at_boundaries():
    s = Steady(0.3, 7.7, 333.3)
    cuts = [k / 3 for k in range(0, 30)]
    pieces = [t for a, b in itertools.pairwise(cuts) for t in s.offsets(a, b)]
    assert pieces == sorted(set(pieces))
    assert len(pieces) == len(s.offsets(0.0, 10.0))


def test_constant_schedule_has_rate_per_tick():
    sched = workload.constant(pairs_per_s=2500, tick_s=1.0, end_s=10.0)
    assert sched.ticks == 10
    assert messages_per_tick(sched, 10) == [5000] * 10
    offsets = sched.tick_offsets(3)
    assert offsets == sorted(offsets)
    assert offsets[0] >= 3.0 and offsets[-1] < 4.0


def test_lead_in_publishes_its_rate_first_then_the_rate():
    sched = workload.constant(200, 1.0, 6.0, lead_in_s=2.5, lead_in_pairs_per_s=100)
    assert messages_per_tick(sched, 6) == [200, 200, 300, 400, 400, 400]
    assert workload.constant(200, 1.0, 6.0, lead_in_s=0, lead_in_pairs_per_s=100) == (
        workload.constant(200, 1.0, 6.0)
    )


def test_time_scale_makes_short_ticks():
    sched = workload.constant(pairs_per_s=200, tick_s=0.5, end_s=2.0)
    assert sched.ticks == 4
    assert messages_per_tick(sched, 4) == [200] * 4


def test_partial_last_tick_is_cut_at_the_end():
    sched = workload.constant(pairs_per_s=100, tick_s=1.0, end_s=2.5)
    assert sched.ticks == 3
    assert messages_per_tick(sched, 3) == [200, 200, 100]


def test_unbounded_schedule():
    sched = workload.constant(100, 1.0, math.inf)
    assert sched.ticks == math.inf
    assert len(sched.tick_offsets(10_000)) == 100


def test_periodic_burst_adds_a_burst_every_period():
    sched = workload.periodic_burst(
        pairs_per_s=200, burst_pairs=5000, every_s=5, duration_s=1.0, tick_s=1.0, end_s=20
    )
    counts = messages_per_tick(sched, 20)
    assert counts[0:5] == [400] * 5
    assert counts[5] == 400 + 10_000
    assert counts[6:10] == [400] * 4
    assert counts[10] == counts[15] == 10_400


def test_burst_windows_are_where_the_bursts_are_due():
    sched = workload.periodic_burst(
        pairs_per_s=200, burst_pairs=5000, every_s=5, duration_s=1.0, tick_s=1.0, end_s=20
    )
    assert sched.burst_windows(100) == [(5, 6), (10, 11), (15, 16)]  # the schedule ends at 20
    assert sched.burst_windows(15) == [(5, 6), (10, 11)]  # due before 15 s only
    for start, end in sched.burst_windows(100):
        due = sched.tick_offsets(int(start))
        assert len(due) - 200 == 5000 and min(due) == start and max(due) < end
    assert workload.constant(200, 1.0, 20).burst_windows(100) == []
    assert Bursts(first_s=2.0, every_s=2.0, duration_s=0.0, pairs=0).windows(10) == []
    assert Bursts(first_s=2.0, every_s=2.0, duration_s=0.0, pairs=1).windows(5) == [
        (2.0, 2.0),
        (4.0, 4.0),
    ]


def test_instant_burst_is_due_at_once():
    bursts = Bursts(first_s=2.0, every_s=2.0, duration_s=0.0, pairs=100)
    assert bursts.offsets(0.0, 2.0) == []
    assert bursts.offsets(2.0, 3.0) == [2.0] * 100
    assert bursts.offsets(3.0, 4.0) == []
    assert len(bursts.offsets(4.0, 5.0)) == 100


def test_burst_longer_than_a_tick_is_split_without_loss():
    bursts = Bursts(first_s=1.0, every_s=10.0, duration_s=2.5, pairs=1000)
    per_tick = [len(bursts.offsets(k, k + 1)) for k in range(15)]
    assert per_tick[:5] == [0, 400, 400, 200, 0]
    assert sum(per_tick) == 2000  # two bursts, at 1 s and 11 s


def test_single_burst_is_a_backlog_then_the_base_rate():
    sched = workload.single_burst(
        pairs_per_s=200, backlog_pairs_per_s=3000, backlog_s=3, tick_s=1.0, end_s=6
    )
    assert messages_per_tick(sched, 6) == [6000, 6000, 6000, 400, 400, 400]


def test_ramp_steps_through_its_rates_and_ends_with_the_last_step():
    sched = workload.ramp((100, 200, 400), step_s=2, tick_s=1.0, end_s=math.inf)
    assert sched.end_s == 6
    assert messages_per_tick(sched, 6) == [200, 200, 400, 400, 800, 800]
    assert workload.ramp((100, 200), step_s=2, tick_s=1.0, end_s=3).ticks == 3
