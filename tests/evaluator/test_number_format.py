"""Every table's numbers: one precision rule for latencies, exact figures elsewhere."""

from evaluator.text.number_format import (
    format_cell,
    format_estimate,
    format_exact,
    format_interval,
    format_ms,
)


def test_format_cell():
    assert (format_cell(None), format_cell(1234.56), format_cell(3)) == ("-", "1,234.6", "3")


def test_a_latency_is_whole_ms_from_10_ms_with_a_true_minus():
    assert [format_ms(v) for v in (0.04, 9.94, 9.95, 1234.5, None)] == [
        "0.0", "9.9", "10", "1,234", "-",
    ]  # fmt: skip
    assert format_ms(-3.21, signed=True) == "−3.2" and format_ms(3.0, signed=True) == "+3.0"
    assert format_ms(-0.01, digits=1) == "0.0"  # no "−0.0"
    assert format_interval([-1.0, 12.0], signed=True) == "[−1.0–+12]"
    assert format_interval(None) == ""


def test_a_value_and_its_interval_share_one_precision():
    # whole ms as soon as any of them reaches 10 ms, as the stage table prints them
    assert format_estimate(1.0, [1.0, 11.0]) == "1 [1–11]"
    assert format_estimate(0.0, [0.0, 1.0]) == "0.0 [0.0–1.0]"
    assert format_estimate(217.0, [190.0, 243.0]) == "217 [190–243]"
    assert format_estimate(3.0, [-1.5, 7.5], signed=True, unit=" ms") == "+3.0 ms [−1.5–+7.5]"
    assert format_estimate(448.0, None) == "448"
    assert format_estimate(None, [1.0, 2.0]) == "-"


def test_exact_figures_keep_three_decimals_and_thousands():
    assert [format_exact(v) for v in (47.3333, 400.0, 24026, None, "auto")] == [
        "47.333", "400", "24,026", "-", "auto",
    ]  # fmt: skip
