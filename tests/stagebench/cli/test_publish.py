"""The publish command's argument handling and progress line (no Kafka)."""

import io
import math

import pytest

from ground.errors import ConfigError
from publisher.summary import ProgressSnapshot, lag_summary
from stagebench.cli.publish import config_from_args, describe
from stagebench.console import Console
from tests.engines.test_config import subcommand


def parse(argv):
    return subcommand("publish").parse_args(argv)


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
    line = describe(snapshot())
    assert "sent 4,800" in line and "400 msg/s" in line
    assert "lag 0.4 ms" in line and "BEHIND" not in line
    late = describe(snapshot(behind=True, delivery_errors=3, end_s=math.inf))
    assert "BEHIND SCHEDULE" in late and "errors 3" in late


def test_progress_is_quiet_when_not_a_terminal():
    stream = io.StringIO()
    with Console(stream).task("publishing", 60) as update:
        for _ in range(10):
            update(12, describe(snapshot()))
    assert stream.getvalue().count("\n") == 1
    assert "publishing 12/60 sent 4,800" in stream.getvalue()


def test_lag_percentiles_are_nearest_rank_in_ms():
    assert lag_summary([]) == {"p50": 0.0, "p99": 0.0, "max": 0.0}
    values = [i / 1000 for i in range(100, 0, -1)]
    assert lag_summary(values) == {"p50": 50.0, "p99": 99.0, "max": 100.0}
