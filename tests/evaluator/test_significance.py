"""The statistics that judge increments and A/B changes, on values worked out by hand or
by scipy's own tests."""

import pytest

from evaluator.statistics.significance import (
    MAX_ROUNDS,
    adjusted,
    joint_level,
    mover,
    pace_spread,
    paired_t,
    ratio_mover,
    welch,
)


def test_the_adjustment_multiplies_by_the_number_of_tests():
    assert adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert adjusted([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert adjusted([]) == []
    assert joint_level(10) == pytest.approx(0.995) and joint_level(0) == pytest.approx(0.95)


@pytest.mark.parametrize("tests", [1, 4, 30])
def test_a_verdict_is_significant_exactly_when_its_joint_interval_excludes_0(tests):
    cases = ([1.0, 2.0, 6.0], [3.0, 3.5, 2.5, 4.0], [-5.0, -4.0, -9.0], [0.2, -0.1, 0.4])
    for differences in cases:
        test = paired_t(differences)
        lo, hi = test.interval(joint_level(tests))
        assert (lo > 0 or hi < 0) == (min(1.0, tests * test.p) < 0.05), (differences, tests)


def test_the_rounds_a_difference_needs_grow_with_the_tests_and_its_spread():
    test = paired_t([3.0, 1.0, 5.0])  # mean 3, sd 2
    few, many = test.rounds_to_resolve(1), test.rounds_to_resolve(30)
    assert few is not None and many is not None and 3 < few < many
    lo, _ = test.with_runs(few).interval(joint_level(1))
    assert lo > 0  # resolved at the rounds it names, not one before
    lo, _ = test.with_runs(few - 1).interval(joint_level(1))
    assert lo <= 0
    assert paired_t([0.01, -0.01, 0.02]).rounds_to_resolve(30) is None  # beyond MAX_ROUNDS
    assert MAX_ROUNDS == 100


def test_welch_on_known_values():
    from scipy import stats

    test = welch([10.0, 12.0, 14.0], [20.0, 25.0, 30.0])
    estimate, (lo, hi), p = test.estimate, test.interval(), test.p
    # variances of the means 4/3 and 25/3; Welch–Satterthwaite df (29/3)² / ((4/3)²/2 + (25/3)²/2)
    se, df = (29 / 3) ** 0.5, (29 / 3) ** 2 / ((4 / 3) ** 2 / 2 + (25 / 3) ** 2 / 2)
    assert df == pytest.approx(2.6240, abs=1e-4)
    half = stats.t.ppf(0.975, df) * se
    assert (estimate, lo, hi) == pytest.approx((13.0, 13.0 - half, 13.0 + half))
    reference = stats.ttest_ind([20.0, 25.0, 30.0], [10.0, 12.0, 14.0], equal_var=False)
    assert p == pytest.approx(reference.pvalue)
    # runs that agree to the millisecond still carry the rounding's spread: no certainty
    test = welch([5.0, 5.0, 5.0], [7.0, 7.0, 7.0])
    (lo, hi), p = test.interval(), test.p
    assert lo < 2.0 < hi and 0 < p < 0.05
    test = paired_t([1.0, 1.0, 1.0])
    (lo, hi), p = test.interval(), test.p
    assert lo < 0 < 1 < hi and p > 0.05  # 1 ms three times is within the rounding


def test_paired_t_and_mover_on_known_values():
    from scipy import stats

    test = paired_t([1.0, 2.0, 6.0])
    mean, (lo, hi), p = test.estimate, test.interval(), test.p
    half = stats.t.ppf(0.975, 2) * stats.tstd([1.0, 2.0, 6.0]) / 3**0.5
    assert (mean, lo, hi) == pytest.approx((3.0, 3.0 - half, 3.0 + half))
    assert p == pytest.approx(stats.ttest_1samp([1.0, 2.0, 6.0], 0).pvalue)
    # 10 [8–11] − 4 [3–7]: below 2 and 3 (4's upper side), above 1 and 1
    assert mover([(1, 10.0, 8.0, 11.0), (-1, 4.0, 3.0, 7.0)]) == pytest.approx(
        (6.0, 6.0 - 13**0.5, 6.0 + 2**0.5)
    )


def test_the_pace_spread_is_a_relative_median_absolute_deviation():
    assert pace_spread([17.6, 18.5, 19.7]) == round(0.9 / 18.5, 4)
    # one slow run among many moves a range, not the median absolute deviation
    assert pace_spread([18.0, 18.2, 18.4, 18.6, 18.8, 25.0]) == round(0.3 / 18.5, 4)
    assert pace_spread([18.0]) is None and pace_spread([]) is None


def test_ratio_mover_on_known_values():
    # equal estimates ±10 %: about 1 ± √2 · 0.1, a little asymmetric as a ratio is
    ratio, lo, hi = ratio_mover((100, 90, 110), (100, 90, 110))
    assert ratio == 1.0
    assert lo == pytest.approx(0.8676, abs=1e-4) and hi == pytest.approx(1.1526, abs=1e-4)
    # an exact denominator leaves the numerator's interval, scaled
    assert ratio_mover((300, 270, 330), (200, 200, 200)) == pytest.approx((1.5, 1.35, 1.65))
    # a denominator whose interval reaches 0 bounds no ratio
    assert ratio_mover((100, 90, 110), (5, 0, 10)) is None
