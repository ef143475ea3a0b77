"""The engine registry and the engines' records: which engine runs which stage, how, and
what a record that breaks the contract gets."""

import dataclasses
import subprocess
import sys
import types

import pytest

from engines import registry
from engines.base import Engine, Support
from engines.config import EngineSettings
from ground.errors import ConfigError
from ground.stages import LADDER, STAGES, chain


def test_every_stage_has_an_engine_and_the_floor_runs_only_the_floor():
    assert [registry.engine_for(s).name for s in STAGES] == ["floor"] + ["spark"] * 6 + ["command"]
    assert registry.stages_of("floor") == ("floor",)
    assert registry.stages_of("spark") == registry.stages_of("kafka-streams") == STAGES[1:-1]
    # a user's job is its own stage, and can implement any stage of the ladder
    assert registry.stages_of("command") == STAGES[1:]


def test_an_engine_name_with_a_hyphen_is_a_package_with_an_underscore():
    found = registry.engine("kafka-streams")
    assert found.job == "engines.kafka_streams.job"
    assert registry.chosen("kafka-streams", "join") is found
    assert registry.chosen("kafka-streams", "floor").name == "floor"


def test_sparks_real_time_mode_runs_no_stage_built_on_the_join():
    spark = registry.engine("spark")
    for s in (s for s in LADDER[1:] if not s.own):
        on_join = any(step.name == "join" for step in chain(s.name))
        assert ("real-time" in spark.triggers(s.name)) is not on_join, s.name
    with pytest.raises(ConfigError, match="real-time mode does not support stage 'join'"):
        spark.check("join", "builtin", "real-time")
    with pytest.raises(ConfigError, match="only ingest, parse, tumbling-union"):
        spark.check("tumbling", "custom", "real-time")


def test_custom_implementations_exist_for_the_joined_windows_only():
    spark = registry.engine("spark")
    spark.check("tumbling", "custom")
    with pytest.raises(ConfigError, match="impl 'custom' exists only for"):
        spark.check("tumbling-union", "custom")
    with pytest.raises(ConfigError, match="the floor has no real-time mode"):
        registry.engine("floor").check("floor", "builtin", "real-time")
    with pytest.raises(ConfigError, match="the floor has no custom implementation"):
        registry.engine("floor").check("floor", "custom")
    with pytest.raises(ConfigError, match="impl must be one of builtin, custom, got 'fast'"):
        spark.check("ingest", "fast")


def test_a_named_engine_runs_its_stages_and_the_floor_stays_the_floor():
    assert registry.chosen("spark", "join").name == "spark"
    assert registry.chosen("", "join").name == registry.chosen(None, "join").name == "spark"
    assert registry.chosen("spark", "floor").name == "floor"
    with pytest.raises(ConfigError, match="floor does not run stage 'join'"):
        registry.chosen("floor", "join")
    with pytest.raises(ConfigError, match="unknown engine 'flonk'"):
        registry.chosen("flonk", "floor")


def test_an_unknown_engine_or_stage_is_refused_by_name():
    known = r"\(engines: floor, spark, flink, kafka-streams, command\)"
    with pytest.raises(ConfigError, match=rf"unknown engine 'flonk' {known}"):
        registry.engine("flonk")
    with pytest.raises(ConfigError, match="spark does not run stage 'floor'"):
        registry.engine("spark").impls("floor")


def test_importing_an_engine_loads_none_of_its_runtime():
    code = (
        "import sys; from engines import registry; registry.engines(); "
        "print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_engine_of_its_own_enters_by_its_subpackage_and_its_name(monkeypatch):
    """A small engine (the floor's loop under another name) needs only its record in
    its package and its name in the registry."""
    package = types.ModuleType("engines.echo")
    package.ENGINE = Engine(  # type: ignore[attr-defined]
        name="echo", title="echo", stages={"floor": Support()}, job="engines.floor.loop",
    )  # fmt: skip
    monkeypatch.setitem(sys.modules, "engines.echo", package)
    monkeypatch.setattr(registry, "NAMES", ("echo", *registry.NAMES))
    registry.engine.cache_clear()
    try:
        assert registry.engine_for("floor").name == "echo"
        assert registry.job(registry.engine("echo")).__module__ == "engines.floor.loop"
        package.ENGINE = Engine(  # type: ignore[attr-defined]
            name="echo", title="echo", stages={"flooor": Support()}, job=""
        )
        registry.engine.cache_clear()
        with pytest.raises(
            ConfigError, match=r"names stages the stage table has not: \['flooor'\]"
        ):
            registry.engine("echo")
    finally:
        registry.engine.cache_clear()


@dataclasses.dataclass(frozen=True)
class EchoSettings(EngineSettings):
    """A setting of the test's own engine, and its command-line option."""

    delay_ms: int = dataclasses.field(default=0, metadata={"help": "delay", "option": True})

    @property
    def place(self) -> str:
        return f"echo after {self.delay_ms} ms"


def test_an_engines_own_settings_reach_its_runs_from_a_file_and_an_option(monkeypatch, tmp_path):
    """The table ``[engine.echo]`` and the option ``--delay-ms`` exist once the engine's
    record names its settings' class; a run of its stage gets them, and config.json
    records them."""
    from ground.kafka.naming import RunTopics
    from stagebench.cli import build_parser
    from stagebench.cli.options import run_overrides
    from stagebench.config.layers import load
    from stagebench.config.roles import assemble
    from stagebench.config.settings import RunConfig

    package = types.ModuleType("engines.echo")
    package.ENGINE = Engine(  # type: ignore[attr-defined]
        name="echo", title="echo", stages={"floor": Support()}, job="engines.floor.loop",
        settings=EchoSettings,
    )  # fmt: skip
    monkeypatch.setitem(sys.modules, "engines.echo", package)
    monkeypatch.setattr(registry, "NAMES", ("echo", *registry.NAMES))
    registry.engine.cache_clear()
    try:
        path = tmp_path / "bench.toml"
        path.write_text("[engine.echo]\ndelay_ms = 5\n")
        assert load(path, {}).section("engine.echo") == {"delay_ms": 5}
        args = build_parser().parse_args(["run", "--stage", "floor", "--delay-ms", "7"])
        settings = load(path, run_overrides(args))
        run = RunConfig(stage="floor")
        roles = assemble(run, settings, "host:1", "r", tmp_path / "r", RunTopics.for_run("r"))
        assert roles.pipeline.settings == EchoSettings(delay_ms=7)
        assert roles.pipeline.settings.place == "echo after 7 ms"
        assert roles.effective(run, settings)["engine.echo"] == {"delay_ms": 7}
        with pytest.raises(ConfigError, match=r"unknown key \[engine.echo\] delay"):
            path.write_text("[engine.echo]\ndelay = 5\n")
            load(path, {})
    finally:
        registry.engine.cache_clear()
