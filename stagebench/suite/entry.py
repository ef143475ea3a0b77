"""An entry of a suite's ``--stages``: ``[ENGINE:]STAGE[/IMPL][@TRIGGER]``.

A suite runs its entries with identical settings but for what an entry names itself:
the engine that runs the stage (``spark:join``), a window's implementation
(``tumbling/custom``) and another execution mode than the settings'
(``tumbling-union@real-time``). Each entry is a ``(key, impl)`` pair, ``key`` being
``[ENGINE:]STAGE[@TRIGGER]``, and becomes a row of the suite's table.
"""

from dataclasses import replace

from engines import registry
from engines.base import Impl, impl_named
from engines.registry import chosen, triggers
from ground.errors import ConfigError
from ground.stages import STAGES
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig

Entry = tuple[str, Impl]
"""A suite's entry: its key (``[engine:]stage[@trigger]``) and its implementation."""


def split_engine(key: str) -> tuple[str | None, str]:
    """``"spark:join@real-time"`` → ("spark", "join@real-time"); ``"join"`` → (None,
    "join"): an entry may name the engine that runs its stage."""
    engine, colon, rest = key.partition(":")
    return (engine, rest) if colon else (None, key)


def split_trigger(key: str) -> tuple[str, str | None]:
    """``"tumbling-union@real-time"`` → ("tumbling-union", "real-time"): a suite runs a
    stage in another trigger mode than its settings' beside the same stage in theirs."""
    name, _, trigger = key.partition("@")
    return name, trigger or None


def parts(key: str) -> tuple[str | None, str, str | None]:
    """An entry's key as (engine or None, stage, trigger or None)."""
    engine, rest = split_engine(key)
    return (engine, *split_trigger(rest))


def label(key: str, impl: str) -> str:
    """ "stage/impl", the trigger after the impl ("tumbling-union/builtin@real-time") and
    the engine before the stage where the entry names one ("spark:join/builtin")."""
    engine, name, trigger = parts(key)
    return (f"{engine}:" if engine else "") + f"{name}/{impl}" + (f"@{trigger}" if trigger else "")


def entries(text: str, default_impl: str, engine_name: str = "") -> list[Entry]:
    """``--stages`` as the suite's (key, impl) pairs, run by the engine an entry names,
    else by ``engine_name`` (``--engine``; "": each stage's default). An entry names an
    engine only where it differs from that default, so ``join`` and ``spark:join`` are
    one entry. Without ``/IMPL`` a stage takes ``default_impl`` (``--impl``) where its
    engine has it, else the engine's own operators. ConfigError naming the entry that
    cannot run, or one given twice."""
    out: list[Entry] = []
    for entry in (s.strip() for s in text.split(",") if s.strip()):
        named, rest = split_engine(entry)
        if named is not None and named not in registry.NAMES:
            known = ", ".join(registry.NAMES)
            raise ConfigError(f"{entry}: unknown engine {named!r} (engines: {known})")
        head, trigger = split_trigger(rest)
        name, _, impl = head.partition("/")
        if entry.endswith("@"):
            raise ConfigError(f"{entry}: no trigger after @ (triggers: {', '.join(triggers())})")
        if name not in STAGES:
            raise ConfigError(f"unknown stage(s) [{name!r}] (stages: {', '.join(STAGES)})")
        if trigger is not None and trigger not in triggers():
            raise ConfigError(
                f"{entry}: unknown trigger {trigger!r} after @ (triggers: {', '.join(triggers())})"
            )
        engine = chosen(named or engine_name, name)
        if named is not None and engine.name != named:
            raise ConfigError(f"{entry}: {name} runs on {engine.name}, not {named}")
        if trigger is not None and trigger not in engine.triggers(name):
            raise ConfigError(f"{entry}: {engine.whose} {trigger} mode cannot run stage {name!r}")
        impl = impl or (default_impl if default_impl in engine.impls(name) else "builtin")
        engine.check(name, impl)
        default = chosen(engine_name, name).name
        prefix = f"{engine.name}:" if engine.name != default else ""
        pair = (prefix + name + (f"@{trigger}" if trigger else ""), impl_named(impl))
        if pair in out:
            raise ConfigError(f"{entry}: given twice in --stages")
        out.append(pair)
    if not out:
        raise ConfigError(f"no stage given (stages: {', '.join(STAGES)})")
    return out


def with_trigger(settings: Settings, trigger: str | None) -> Settings:
    """``settings`` with ``[pipeline] trigger`` set to ``trigger`` (unchanged for None)."""
    if trigger is None:
        return settings
    values = {**settings.values, "pipeline": {**settings.section("pipeline"), "trigger": trigger}}
    sources = {**settings.sources, "pipeline": {**settings.sources.get("pipeline", {}),
                                                "trigger": "suite --stages"}}  # fmt: skip
    return Settings(values, sources)


def entry_run(base: RunConfig, settings: Settings, entry: Entry) -> tuple[RunConfig, Settings]:
    """The run configuration and settings of one ``(key, impl)`` entry."""
    engine, name, trigger = parts(entry[0])
    run = replace(base, stage=name, impl=entry[1], engine=engine or base.engine)
    return run, with_trigger(settings, trigger)
