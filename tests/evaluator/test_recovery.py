"""Recovery after disturbance windows, on hand-made per-second series with known answers."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from evaluator.model.run_info import RunInfo, load_run, save_run
from evaluator.recovery.section import (
    cause_text,
    level_text,
    section,
    settled_text,
    summarise,
    warnings,
)
from evaluator.recovery.windows import BY_INPUT, BY_OUTPUT, Window, recoveries
from ground.errors import ConfigError, EvaluationError

T0 = 1_000  # epoch second of the series' first row


def series(p50: list[float | None]) -> pd.DataFrame:
    """One row a second from T0; None: a second without outputs."""
    values = np.array([np.nan if v is None else v for v in p50], float)
    return pd.DataFrame(
        {
            "second": np.arange(T0, T0 + len(values)),
            "input_count": 10,
            "output_count": np.where(np.isnan(values), 0, 5),
            "latency_p50_ms": values,
            "latency_p99_ms": values * 2,
        }
    )


def at(second: float) -> int:
    """Broker ms of ``second`` seconds into the series."""
    return round((T0 + second) * 1000)


def burst(start: float, end: float, kind: str = "burst") -> Window:
    return Window(kind, at(start), at(end))


def one(p50: list[float | None], window: Window, **kw):
    (found,) = recoveries(series(p50), [window], kw.get("baseline_s", 20.0), 0.2)
    return found


def test_a_burst_recovers_when_three_seconds_are_back_within_20_percent():
    # 20 s at 100 ms, a burst in second 20, then 400, 300, 130 (above 120), 110, 100, …
    p50 = [100] * 20 + [150, 400, 300, 130, 110, 100, 100, 100, 100]
    found = one(p50, burst(20, 21))
    assert found.baseline_p50_ms == 100
    assert found.recovery_s == 3.0  # second 24 starts 3 s after the burst ends
    assert found.recovered is True
    assert found.peak_ms == 400
    assert found.first_output_after_s == 0.0


def test_the_bound_is_inclusive_and_lower_latency_is_not_inflated():
    found = one([100] * 20 + [500, 120, 50, 119], burst(20, 21))
    assert found.recovery_s == 0.0 and found.recovered is True


def test_one_lucky_second_does_not_count():
    p50 = [100] * 20 + [150, 400, 100, 300, 100, 100, 100, 100]
    assert one(p50, burst(20, 21)).recovery_s == 3.0  # not 1.0 (second 22 alone)


def test_recovery_is_counted_from_the_window_end_in_whole_seconds():
    p50 = [100] * 20 + [400] * 6 + [100] * 5
    found = one(p50, burst(20, 23.5))
    assert found.recovery_s == 2.5  # second 26 starts 2.5 s after 23.5
    assert found.peak_ms == 400


def test_never_recovering_is_reported_with_the_peak_until_the_end():
    p50 = [100] * 20 + [200, 300, 250, 600, 130, 130]
    found = one(p50, burst(20, 21))
    assert found.recovered is False and found.recovery_s is None
    assert found.peak_ms == 600
    assert found.baseline_p50_ms == 100


def test_too_few_seconds_before_the_window_give_no_baseline():
    p50 = [None, None, 100, 100, 100, 100, 400, 100, 100, 100]
    found = one(p50, burst(6, 7))
    assert found.baseline_p50_ms is None  # four seconds with outputs before it
    assert found.recovered is None and found.recovery_s is None
    assert found.peak_ms == 400 and found.first_output_after_s == 0.0


def test_the_baseline_is_the_median_of_its_span_only():
    # 10 s of 1000 ms long before, then 20 s alternating 100 and 110 ms
    p50 = [1000] * 10 + [100, 110] * 10 + [300, 100, 100, 100]
    found = one(p50, burst(30, 31))
    assert found.baseline_p50_ms == 105
    assert one(p50, burst(30, 31), baseline_s=30).baseline_p50_ms == 110


def test_an_outage_without_outputs_then_a_gap():
    # no outputs during the outage and after it until second 28; second 31 has none either
    p50 = [100] * 20 + [None] * 8 + [900, 200, 100, None, 100, 100]
    found = one(p50, burst(20, 25.5, "broker-restart"))
    assert found.first_output_after_s == 2.5
    assert found.recovery_s == 4.5  # seconds 30, 32, 33: the gap neither counts nor breaks
    assert found.recovered is True
    assert found.peak_ms == 900


def test_no_output_after_the_window():
    found = one([100] * 20 + [None] * 5, burst(20, 21))
    assert found.first_output_after_s is None and found.peak_ms is None
    assert found.recovered is False
    empty = one([], burst(20, 21))
    assert (empty.baseline_p50_ms, empty.peak_ms, empty.recovered) == (None, None, None)


def test_back_to_back_bursts():
    p50 = [100] * 20 + [300, 400, 200, 100, 100, 100, 100]
    first, second = recoveries(series(p50), [burst(21, 22), burst(20, 21)], 20.0, 0.2)
    assert first.window == burst(20, 21)  # in the order of their starts
    # the next burst starts when this one ends: no second left to recover in
    assert first.recovered is False and first.recovery_s is None and first.peak_ms == 300
    # its baseline leaves out the first burst's second
    assert second.baseline_p50_ms == 100
    assert second.recovery_s == 1.0 and second.peak_ms == 400


def test_a_recovery_must_fit_before_the_next_window():
    p50 = [100] * 20 + [400, 400, 100, 100, 400, 100, 100, 100, 100]
    first, second = recoveries(series(p50), [burst(20, 21), burst(24, 25)], 20.0, 0.2)
    assert first.recovered is False  # seconds 22 and 23 only: two, not three
    assert second.recovery_s == 0.0


def test_a_burst_is_judged_against_the_level_before_the_last_ones_tail():
    # bursts in seconds 20 and 30; the first recovers only at second 26, leaving four
    # undisturbed seconds before the second: its baseline is the first's 100 ms, not
    # the median of a 10 s window mostly in the first's tail (400 ms)
    p50 = [100] * 20 + [500] + [400] * 5 + [100] * 4 + [500, 200, 200, 100, 100, 100]
    first, second = recoveries(series(p50), [burst(20, 21), burst(30, 31)], 10.0, 0.2)
    assert first.recovery_s == 5.0
    assert second.baseline_p50_ms == 100
    assert second.recovery_s == 2.0 and second.peak_ms == 500
    # a first window without enough seconds before it has no baseline to fall back on
    (alone,) = recoveries(series(p50[16:]), [Window("burst", at(4), at(5))], 10.0, 0.2)
    assert alone.baseline_p50_ms is None


def test_an_instant_burst():
    found = one([100] * 20 + [500, 100, 100, 100], burst(20.3, 20.3))
    assert found.recovery_s == 0.7 and found.peak_ms == 500


def test_summary_over_windows():
    p50 = [100] * 20 + [300, 100, 100, 100] + [100] * 6 + [900, 100, 100, 100, 100, 100]
    p50 += [700] * 6
    found = recoveries(series(p50), [burst(20, 21), burst(30, 31), burst(36, 37)], 20.0, 0.2)
    assert [r.recovery_s for r in found] == [0.0, 0.0, None]
    got = summarise(found)
    assert got == {
        "windows": 3, "recovered": 2, "not_recovered": 1, "no_baseline": 0,
        "recovery_s_median": 0.0, "recovery_s_max": 0.0,
        "peak_ms_median": 700.0, "peak_ms_max": 900.0,
        # a few seconds between bursts cannot tell a level
        "settled": 0, "new_level": 0, "not_settled": 0,
        "settled_s_median": None, "settled_s_max": None, "offset_median": None,
    }  # fmt: skip
    assert summarise([])["recovery_s_median"] is None


def test_section_reports_the_windows_in_the_measured_period():
    p50 = [100] * 20 + [300, 100, 100, 100] + [100] * 6 + [900] + [100] * 5
    windows = [burst(20, 21), burst(30, 31)]
    got = section(series(p50), windows, at(25), at(40), 20.0, 0.2)
    assert got is not None
    assert (got["baseline_window_s"], got["threshold"], got["hold_s"]) == (20.0, 0.2, 3)
    assert got["windows"] == [
        {"kind": "burst", "start_ms": at(30), "end_ms": at(31), "process": None,
         "partial": False, "baseline_p50_ms": 100.0, "peak_ms": 900.0, "first_output_after_s": 0.0,
         "recovery_s": 0.0, "recovered": True, "baseline_p50_ci95": [100.0, 100.0],
         "settled": None, "cause": None, "settled_s": None, "settled_p50_ms": None,
         "settled_p50_ci95": None, "offset": None, "offset_ci95": None, "level": None,
         "series": BY_OUTPUT}
    ]  # fmt: skip
    assert got["summary"]["windows"] == 1
    assert warnings(got) == []
    assert section(series(p50), [], at(0), at(40), 20.0, 0.2) is None


def test_a_lost_instance_is_judged_by_the_seconds_its_inputs_waited_in():
    # one instance of two lost at second 20 (an instant): its inputs of seconds 20–27 wait
    # until the rebalance gives their partition to the other, which then catches up; each
    # second's outputs are on time at p50 (the other's), while the inputs' p99 climbs
    on_time = [100] * 40
    waited = [200] * 20 + [8_000, 7_000, 6_000, 5_000, 4_000, 3_000, 2_000, 1_000, 220] + [200] * 11
    lost = Window("instance-loss", at(20), at(20), "engine", partial=True)
    by_input = series(on_time).assign(latency_p99_ms=np.array(waited, float))
    plain = section(series(on_time), [lost], at(0), at(40), 20.0, 0.2)
    assert plain is not None and plain["windows"][0]["recovery_s"] == 0.0  # what p50 shows
    got = section(series(on_time), [lost], at(0), at(40), 20.0, 0.2, by_input=by_input)
    assert got is not None
    (window,) = got["windows"]
    assert window["series"] == BY_INPUT and window["partial"] is True
    assert window["baseline_p50_ms"] == 200.0 and window["peak_ms"] == 8_000.0
    assert window["recovery_s"] == 8.0 and window["recovered"] is True


def test_not_recovering_is_a_warning():
    got = section(series([100] * 20 + [300] * 5), [burst(20, 21)], at(0), at(25), 20.0, 0.2)
    (text,) = warnings(got)
    assert "not recovered after 1 of 1 disturbance windows (burst)" in text
    assert warnings(None) == []


def test_a_window_cannot_end_before_it_starts():
    with pytest.raises(EvaluationError, match="ends"):
        Window("burst", 2000, 1000)


def test_run_json_keeps_the_windows(tmp_path):
    run = RunInfo(id="r", stage="ingest", output_topic="o", disturbances=(burst(20, 21),))
    save_run(run, tmp_path)
    assert load_run(tmp_path) == run
    assert load_run(tmp_path).disturbances[0] == burst(20, 21)


def test_config_validates_the_recovery_settings():
    from evaluator.config import EvaluatorConfig

    with pytest.raises(ConfigError, match="recovery_baseline_s"):
        EvaluatorConfig(recovery_baseline_s=2)
    with pytest.raises(ConfigError, match="recovery_threshold"):
        EvaluatorConfig(recovery_threshold=0)


# --- where the latency settles: simulated series with a known level after a spike ------

BASELINE, NEW = 220.0, 290.0
OUTAGE = 17  # seconds without outputs: the broker down


def restart(after: float, rng: np.random.Generator, seconds: int = 70) -> list[float | None]:
    """20 s around BASELINE, an outage, a two-second backlog spike, then ``seconds`` around
    ``after``: per-second p50s wandering by 5 % (AR(1), φ = 0.5) with 5 % noise."""
    wander = np.zeros(seconds)
    for i in range(1, seconds):
        wander[i] = 0.5 * wander[i - 1] + rng.normal(0, 0.05 * after * np.sqrt(0.75))
    tail = after + wander + rng.normal(0, 0.05 * after, seconds)
    head = BASELINE + rng.normal(0, 0.05 * BASELINE, 20)
    return [*head, *[None] * OUTAGE, 15_000.0, 4_000.0, *tail]


FAULT = Window("broker-restart", at(20), at(20 + OUTAGE), "broker")
PLATEAU_S = OUTAGE + 2  # the plateau's first second, from the series' start


def settle(p50: list[float | None]):
    (found,) = recoveries(series(p50), [FAULT], 20.0, 0.2)
    return found


def test_a_step_to_a_new_level_is_reported_as_settled_there_with_its_offset():
    rng = np.random.default_rng(7)
    offset = NEW / BASELINE - 1
    found = [settle(restart(NEW, rng)) for _ in range(200)]
    # settled at a new level from the plateau's first second (2 s after the outage) in
    # nearly all; a few were within 20 % of before for 3 s in a row by chance
    # ("recovered") with an offset's interval that reached below 20 %: undetermined, and
    # the time to them the recovery's
    assert all(r.settled is True and r.steady_level for r in found)
    kinds = Counter(r.steady_level.level for r in found if r.steady_level)
    assert kinds["new"] >= 190 and kinds["new"] + kinds["undetermined"] == 200
    undetermined = [r for r in found if r.steady_level and r.steady_level.level != "new"]
    assert all(r.steady_level.after_s == r.recovery_s for r in undetermined if r.steady_level)
    starts = np.array([r.steady_level.after_s for r in found if r not in undetermined])
    assert np.mean(starts == 2) >= 0.95 and starts.max() <= 5
    # the offset's 95 % interval holds the true +32 % as often as it claims
    covered = [
        r.steady_level.offset_ci95[0] <= offset <= r.steady_level.offset_ci95[1]
        for r in found
        if r.steady_level and r.steady_level.offset_ci95
    ]
    assert len(covered) == 200 and np.mean(covered) >= 0.9


def test_a_return_to_the_level_before_gives_the_recovery_time_for_both():
    rng = np.random.default_rng(11)
    found = [settle(restart(BASELINE, rng)) for _ in range(200)]
    assert all(r.recovered is True for r in found)
    assert all(r.steady_level is not None and r.steady_level.level == "before" for r in found)
    assert all(r.steady_level.after_s == r.recovery_s for r in found if r.steady_level)


def test_a_latency_still_climbing_has_not_settled():
    climbing = [*[BASELINE] * 20, *[None] * OUTAGE, *np.geomspace(400, 40_000, 60)]
    found = settle(climbing)
    assert found.recovered is False and found.settled is False and found.steady_level is None
    got = section(series(climbing), [FAULT], at(0), at(100), 20.0, 0.2)
    (text,) = warnings(got)
    assert "had not recovered after 1 of 1 disturbance windows (broker-restart)" in text


def test_a_new_level_is_a_warning_that_says_where():
    p50 = restart(NEW, np.random.default_rng(3))
    got = section(series(p50), [FAULT], at(0), at(len(p50)), 20.0, 0.2)
    assert got is not None and got["summary"]["new_level"] == 1
    (text,) = warnings(got)
    assert "did not come back to the level before after 1 of 1 disturbance windows" in text
    assert "settled 2 s after the broker-restart at +3" in text  # +30-something %
    assert "of the p50 before (2" in text
    window = got["windows"][0]
    assert settled_text(window) in text and window["level"] == "new"


def test_the_level_ends_with_the_measured_period():
    # 40 s at one level, then 20 s at another after the measured period
    p50 = [*[BASELINE] * 20, *[None] * OUTAGE, *[NEW] * 40, *[900.0] * 20]
    in_period = section(series(p50), [FAULT], at(0), at(20 + OUTAGE + 40), 20.0, 0.2)
    assert in_period is not None
    assert (in_period["windows"][0]["settled_s"], in_period["windows"][0]["settled_p50_ms"]) == (
        0.0,
        NEW,
    )
    # over the whole series the latency settles only at the last level, 40 s later
    whole = section(series(p50), [FAULT], at(0), at(len(p50)), 20.0, 0.2)
    assert whole is not None
    assert (whole["windows"][0]["settled_s"], whole["windows"][0]["settled_p50_ms"]) == (
        40.0,
        900.0,
    )


def test_the_cause_compares_the_restarted_process_before_and_after():
    p50 = restart(NEW, np.random.default_rng(5))
    seconds = np.arange(T0, T0 + len(p50))
    cpu = np.where(seconds < T0 + 20, 10.0, 16.0)
    usage = pd.DataFrame(
        {
            "time_ms": np.concatenate([seconds, seconds]) * 1000 + 1000,
            "process": ["broker"] * len(p50) + ["engine"] * len(p50),
            "cpu_percent": np.concatenate([cpu, np.full(len(p50), 50.0)]),
            "gc_ms_per_s": np.concatenate([np.full(len(p50), 2.0), np.full(len(p50), 9.0)]),
        }
    )
    (found,) = recoveries(series(p50), [FAULT], 20.0, 0.2, usage=usage)
    assert found.cause is not None
    assert (found.cause.process, found.cause.cpu_percent) == ("broker", (10.0, 16.0))
    assert found.cause.gc_ms_per_s == (2.0, 2.0)
    window = section(series(p50), [FAULT], at(0), at(len(p50)), 20.0, 0.2, usage=usage)
    assert window is not None
    assert cause_text(window["windows"][0]) == (
        "broker: CPU 10 → 16 % of a core, GC 2 → 2 ms/s (before → after)"
    )
    # a burst names no process: no cause
    (burst_found,) = recoveries(series(p50), [burst(20, 37)], 20.0, 0.2, usage=usage)
    assert burst_found.cause is None


def test_a_level_not_shown_to_differ_says_so():
    window = {"kind": "engine-restart", "settled": True, "settled_s": 41.569,
              "settled_p50_ms": 342.0, "settled_p50_ci95": [264.0, 430.0], "offset": 0.36,
              "offset_ci95": [-0.01, 0.88], "level": "undetermined"}  # fmt: skip
    assert settled_text(window) == (
        "settled 41.569 s after the engine-restart at +36 % [−1–+88 %] of the p50 before "
        "(342 ms), not shown to differ from it"
    )
    assert (
        level_text(window) == "342 ms [264–430], +36 % [−1–+88 %]: not shown to differ from before"
    )
    assert level_text({**window, "settled": False}) == "not settled"
    assert level_text({**window, "settled": None}) == "-"
