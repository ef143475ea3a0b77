"""The publish command's argument handling and progress line (no Kafka)."""

import argparse
import io
import math

import pytest

from publisher.cli import ProgressDisplay, config_from_args, format_progress, register
from publisher.summary import ProgressSnapshot, lag_summary
from stagebench.errors import ConfigError


def parse(argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["publish", *argv])


def test_options_map_onto_the_config_and_omitted_ones_keep_defaults():
    config = config_from_args(
        parse(["--rate", "5000", "--workload", "ramp", "--ramp-rates", "400,800", "--acks", "1"])
    )
    assert config.rate == 5000
    assert config.ramp_rates == (400.0, 800.0)
    assert config.acks == "1"
    assert config.linger_ms == 1.0
    assert config.speed_topic == "speed"


def test_rate_and_locations_are_exclusive():
    with pytest.raises(SystemExit):
        parse(["--rate", "400", "--locations", "3"])


def test_invalid_values_become_config_errors():
    with pytest.raises(ConfigError, match="time_scale"):
        config_from_args(parse(["--time-scale", "-1"]))


def snapshot(**changes):
    values = dict(
        elapsed_s=12.0, end_s=60.0, sent=4800, delivery_errors=0, rate=400.0, lag_ms=0.4,
        behind=False,
    )  # fmt: skip
    return ProgressSnapshot(**{**values, **changes})


def test_progress_line_shows_count_rate_and_lag():
    line = format_progress(snapshot())
    assert "12.0/60 s" in line and "sent 4,800" in line and "400 msg/s" in line
    assert "lag 0.4 ms" in line and "BEHIND" not in line
    late = format_progress(snapshot(behind=True, delivery_errors=3, end_s=math.inf))
    assert "BEHIND SCHEDULE" in late and "errors 3" in late and "/" not in late.split("|")[0]


def test_progress_is_quiet_when_not_a_terminal():
    stream = io.StringIO()
    display = ProgressDisplay(stream)
    for _ in range(10):
        display(snapshot())
    display.close()
    assert stream.getvalue().count("\n") == 1


def test_lag_percentiles_are_nearest_rank_in_ms():
    assert lag_summary([]) == {"p50": 0.0, "p99": 0.0, "max": 0.0}
    values = [i / 1000 for i in range(100, 0, -1)]
    assert lag_summary(values) == {"p50": 50.0, "p99": 99.0, "max": 100.0}
