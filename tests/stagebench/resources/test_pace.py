import gc

import pytest

from stagebench.resources import pace


def test_the_pace_is_the_fastest_timing_of_the_work_after_one_untimed_run():
    ticks = iter([0.0, 0.050, 1.0, 1.040, 2.0, 2.045])  # 50, 40, 45 ms
    calls, pauses = [], []
    fastest = pace.measure(3, lambda: calls.append(1), lambda: next(ticks), pauses.append)
    assert fastest == 40.0
    assert len(calls) == 4 and pauses == [pace.GAP_S] * 3


def test_the_garbage_collector_is_off_while_timing_and_on_again_after():
    seen = []
    pace.measure(2, lambda: seen.append(gc.isenabled()), pause=lambda s: None)
    assert seen == [False] * 3 and gc.isenabled()


def test_the_real_work_takes_a_measurable_time():
    assert 1 < pace.measure(repeats=2, pause=lambda s: None) < 5_000


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [(40.0, 46.0, 0.15), (40.0, 30.0, -0.25), (None, 40.0, None), (40.0, None, None)],
)
def test_the_change_is_positive_when_the_host_slowed_down(before, after, change):
    assert pace.change(before, after) == change
    assert pace.section(before, after)["change"] == change


def test_a_run_warns_only_when_its_host_changed_speed_by_more_than_15_percent():
    assert pace.run_warnings(pace.section(40.0, 46.0)) == []  # +15 %: at the line
    assert pace.run_warnings(pace.section(40.0, None)) == []
    assert pace.run_warnings(None) == []
    (warning,) = pace.run_warnings(pace.section(40.0, 47.0))
    assert "took 40 ms on one core before it and 47 ms after (+18 %" in warning
    (warning,) = pace.run_warnings(pace.section(50.0, 40.0))
    assert "(-20 %" in warning
