"""A suite's entries: ``[ENGINE:]STAGE[/IMPL][@TRIGGER]`` parsed, checked and run."""

import pytest

from ground.errors import ConfigError
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.suite.entry import entries, entry_run, label, parts


def test_stages_name_their_implementation_and_mode():
    assert entries("join,tumbling,tumbling/custom,tumbling-union@real-time", "builtin") == [
        ("join", "builtin"), ("tumbling", "builtin"), ("tumbling", "custom"),
        ("tumbling-union@real-time", "builtin"),
    ]  # fmt: skip
    # --impl custom: the windows' custom implementation, Spark's own for the others
    assert entries("join,sliding,tumbling/builtin", "custom") == [
        ("join", "builtin"), ("sliding", "custom"), ("tumbling", "builtin"),
    ]  # fmt: skip


def test_an_entry_names_its_engine_where_it_is_not_the_default():
    # spark runs join by default: spark:join is join, and naming it twice is refused
    assert entries("spark:join,spark:tumbling-union@real-time,floor", "builtin") == [
        ("join", "builtin"), ("tumbling-union@real-time", "builtin"), ("floor", "builtin"),
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="spark:join: given twice in --stages"):
        entries("join,spark:join", "builtin")
    with pytest.raises(ConfigError, match=r"flonk:join: unknown engine 'flonk' \(engines: "):
        entries("flonk:join", "builtin")
    with pytest.raises(ConfigError, match=r"floor does not run stage 'join' \(it runs: floor\)"):
        entries("floor:join", "builtin")
    with pytest.raises(ConfigError, match="spark:floor: floor runs on floor, not spark"):
        entries("spark:floor", "builtin")
    with pytest.raises(ConfigError, match=r":join: unknown engine ''"):
        entries(":join", "builtin")


def test_an_entrys_parts_label_and_run():
    assert parts("spark:tumbling-union@real-time") == ("spark", "tumbling-union", "real-time")
    assert parts("floor") == (None, "floor", None)
    assert label("spark:join", "builtin") == "spark:join/builtin"
    assert label("tumbling-union@real-time", "builtin") == "tumbling-union/builtin@real-time"
    base = RunConfig(engine="")
    run, settings = entry_run(base, Settings({}, {}), ("spark:tumbling@real-time", "custom"))
    assert (run.engine, run.stage, run.impl) == ("spark", "tumbling", "custom")
    assert settings.section("pipeline")["trigger"] == "real-time"
    run, _ = entry_run(base, Settings({}, {}), ("join", "builtin"))
    assert (run.engine, run.stage) == ("", "join")
