"""[run] profile: an engine's settings that trade latency for throughput, at one end."""

import pytest

from ground.errors import ConfigError
from stagebench.config.layers import load


def test_the_throughput_profile_sets_every_engines_candidates_but_what_was_given():
    given = {"run": {"profile": "throughput"}, "engine.flink": {"linger_ms": 5}}
    settings = load(None, given)
    flink = settings.section("engine.flink")
    assert flink == {"linger_ms": 5, "buffer_timeout_ms": 100, "parallelism": 2}
    assert settings.sources["engine.flink"]["buffer_timeout_ms"] == "profile throughput"
    assert settings.sources["engine.flink"]["linger_ms"] != "profile throughput"
    assert settings.section("engine.kafka-streams")["cache_max_bytes"] == 10_485_760
    assert settings.section("engine.spark")["trigger_interval_ms"] == 2000


def test_the_latency_profile_is_the_defaults_and_sets_nothing():
    assert load(None, {"run": {"profile": "latency"}}).section("engine.flink") == {}
    assert load(None, {}).section("engine.flink") == {}


def test_an_unknown_profile_is_refused_with_the_profiles(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[run]\nprofile = "fastest"\n')
    with pytest.raises(ConfigError, match="profile: expected one of 'latency', 'throughput'"):
        load(path, {})
