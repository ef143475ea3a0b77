"""The A/B maths on made-up per-run values: verdicts, withheld verdicts, the regression
check, and what differs between the sides."""

import pytest

from evaluator.comparison.ab import (
    FASTER,
    NO_VERDICT,
    SAME,
    SLOWER,
    WITHHELD,
    ABComparison,
    changes,
    condition_flags,
    regression,
    setting_changes,
)
from ground.errors import EvaluationError
from tests.evaluator.summaries import made_summary


def runs(stage, p50s, p99_factor=2.0, impl="builtin", ci=0.03):
    """Per-run rows as evaluator.comparison.rows.run_row gives them."""
    return [
        {"stage": stage, "impl": impl, "p50": v, "p99": v * p99_factor,
         "p50_ci95": [v * (1 - ci), v * (1 + ci)],
         "p99_ci95": [v * p99_factor * (1 - ci), v * p99_factor * (1 + ci)]}
        for v in p50s
    ]  # fmt: skip


def comparison(found):
    withheld = any(c.verdict == WITHHELD for c in found)
    return ABComparison(found, [], [], [], NO_VERDICT if withheld else None)


def test_clearly_separated_groups_of_three_are_slower_with_an_interval_excluding_0():
    found = changes(runs("ingest", [30, 31, 29]), runs("ingest", [45, 46, 44]))
    assert [c.quantile for c in found] == ["p50", "p99"]
    p50 = found[0]
    assert p50.verdict == SLOWER and p50.method == "welch" and p50.runs == (3, 3)
    assert p50.change_ms == pytest.approx(15.0) and p50.relative == pytest.approx(0.5)
    assert 0 < p50.ci95[0] < 15 < p50.ci95[1]
    # the other way round the same runs are faster
    assert changes(runs("ingest", [45, 46, 44]), runs("ingest", [30, 31, 29]))[0].verdict == FASTER


def test_identical_groups_are_not_significantly_different():
    found = changes(runs("join", [228, 240, 220]), runs("join", [228, 240, 220]))
    assert {c.verdict for c in found} == {SAME}
    assert all(c.ci95[0] < 0 < c.ci95[1] for c in found)


def test_one_run_against_one_shows_the_within_run_interval_and_withholds_the_verdict():
    [p50, p99] = changes(runs("join", [228]), runs("join", [300]))
    assert p50.verdict == WITHHELD and p50.method == "within-run" and p50.p is None
    assert p50.change_ms == pytest.approx(72.0)
    # the two runs' own intervals combined: ±√(6.84² + 9²)
    assert p50.ci95 == pytest.approx((72 - 11.3, 72 + 11.3), abs=0.05)
    check = regression(comparison([p50, p99]), 0.10)
    assert not check.failed and check.no_verdict.startswith("fewer than 3 runs on a side")


def test_the_tests_of_all_stages_are_judged_together_with_the_intervals_shown():
    a = runs("ingest", [30, 31, 29]) + runs("join", [228, 240, 220])
    b = runs("ingest", [45, 46, 44]) + runs("join", [229, 241, 221])
    found = changes(a, b)
    assert [c.stage for c in found] == ["ingest", "ingest", "join", "join"]
    assert all(c.p_adjusted == pytest.approx(min(1.0, 4 * c.p)) for c in found)
    assert [c.verdict for c in found] == [SLOWER, SLOWER, SAME, SAME]
    for c in found:  # the interval shown is the one the verdict was made with, and wider
        lo, hi = c.shown_interval
        assert (lo > 0 or hi < 0) == (c.verdict != SAME)
        assert lo < c.ci95[0] and c.ci95[1] < hi


def test_a_stage_only_one_side_has_is_left_out_and_two_impls_on_a_side_refused():
    found = changes(runs("ingest", [30]) + runs("join", [228]), runs("join", [230]))
    assert {c.stage for c in found} == {"join"}
    with pytest.raises(EvaluationError, match="side A holds tumbling in 2 implementations"):
        changes(runs("tumbling", [3000]) + runs("tumbling", [2900], impl="custom"),
                runs("tumbling", [3000]))  # fmt: skip


@pytest.mark.parametrize(
    ("new", "limit", "failed"),
    [
        ([45, 46, 44], 0.10, True),  # +50 %, significant
        ([45, 46, 44], 0.60, False),  # significant, but within the limit
        ([31, 32, 30], 0.10, False),  # +3 %: within the limit
        ([20, 21, 19], 0.10, False),  # faster
        ([30, 31, 29], 0.0, False),  # the same
    ],
)
def test_the_regression_check_fails_only_on_a_significant_worsening_beyond_the_limit(
    new, limit, failed
):
    found = changes(runs("ingest", [30, 31, 29]), runs("ingest", new))
    check = regression(comparison(found), limit)
    assert check.failed is failed
    assert all(c.verdict == SLOWER for c in check.regressed)


def test_a_significant_rise_from_a_p50_of_0_exceeds_any_limit():
    found = changes(runs("floor", [0.0, 0.0, 0.0]), runs("floor", [5.0, 5.0, 6.0]))
    assert regression(comparison(found), 10.0).failed


def summary(trigger=0, pace=13.0, kafka="4.3.1", host="box"):
    return made_summary(
        run={"stage": "ingest", "impl": "builtin", "rate": 400.0, "workload": "latency"},
        config={"pipeline": {"trigger_interval_ms": trigger, "run_id": "x"}},
        versions={"kafka_broker": kafka},
        machine={"pace": {"before_ms": pace, "after_ms": pace}, "broker": {"kind": "embedded"}},
        metadata={"machine": {"hostname": host, "cores": 2}},
    )


def test_the_settings_that_differ_between_the_sides_are_listed_with_each_sides_values():
    a, b = [summary(0), summary(0)], [summary(500), summary(500)]
    assert setting_changes(a, b) == ["[engine.spark] trigger_interval_ms: A 0, B 500"]
    assert setting_changes(a, [summary(500), summary(0)]) == [
        "[engine.spark] trigger_interval_ms: A 0, B 500/0"
    ]
    assert setting_changes(a, a) == []


def test_a_host_of_another_pace_another_kafka_or_machine_is_flagged():
    assert condition_flags([summary()], [summary(pace=13.5)]) == []
    [pace, kafka, machine] = condition_flags(
        [summary()], [summary(pace=17.0, kafka="4.2.0", host="other")]
    )
    assert pace.startswith("pace: a fixed piece of work took 13 ms") and "+31 %" in pace
    assert kafka == "Kafka: A on embedded 4.3.1, B on embedded 4.2.0"
    assert machine == "machine: A on box (2 cores), B on other (2 cores)"
