"""The engines stagebench knows, imported when one is chosen.

An engine is added by its subpackage (see :mod:`engines.base`) and its name in
:data:`NAMES`; nothing else of the bench changes. Importing an engine's package loads
only its :class:`~engines.base.Engine` record, never its runtime, so ``--help`` and
every check stay light.
"""

import importlib
import importlib.util
from collections.abc import Callable
from functools import cache
from typing import Any

from engines.base import Engine, ReadBack
from ground.errors import ConfigError
from ground.stages import STAGES
from ground.stages import stage as known_stage

NAMES: tuple[str, ...] = ("floor", "spark", "flink", "kafka-streams", "command")
"""The engines, each a subpackage of :mod:`engines` (named with ``_`` for ``-``: the engine
``kafka-streams`` is ``engines.kafka_streams``); the first that runs a stage runs it when
no engine is named."""


@cache
def engine(name: str) -> Engine[Any]:
    """The engine called ``name``; ConfigError naming the known ones otherwise."""
    if name not in NAMES:
        raise ConfigError(f"unknown engine {name!r} (engines: {', '.join(NAMES)})")
    found = importlib.import_module(f"engines.{name.replace('-', '_')}").ENGINE
    if not isinstance(found, Engine) or found.name != name:
        raise ConfigError(f"engines.{name}.ENGINE is not the Engine record of {name!r}")
    unknown = [s for s in found.stages if s not in STAGES]
    if unknown:
        raise ConfigError(f"engine {name!r} names stages the stage table has not: {unknown}")
    for module in found.modules():
        if not _exists(module):
            raise ConfigError(f"engine {name!r} names the module {module!r}, which is not there")
    return found


def _exists(module: str) -> bool:
    """``module`` can be imported (found without running it: its package is already)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def engines() -> tuple[Engine[Any], ...]:
    """Every engine, in :data:`NAMES`' order."""
    return tuple(engine(name) for name in NAMES)


def engine_for(stage: str) -> Engine[Any]:
    """The engine that runs ``stage`` when none is named: the first that runs it;
    ConfigError for an unknown stage."""
    known_stage(stage)
    for found in engines():
        if found.runs(stage):
            return found
    raise ConfigError(f"no engine runs stage {stage!r} (stages: {', '.join(STAGES)})")


def chosen(name: str | None, stage: str) -> Engine[Any]:
    """The engine a run of ``stage`` takes when the configuration names ``name`` (None or
    "": the stage's default). The floor, the rung every engine's ladder stands on, runs
    as the floor whatever is named; ConfigError when the named engine does not run the
    stage."""
    found = engine(name) if name else None
    if found is None or known_stage(stage).builds_on is None:
        return engine_for(stage)
    found.impls(stage)
    return found


def stages_of(name: str) -> tuple[str, ...]:
    """The stages the engine ``name`` runs, in ladder order."""
    return tuple(s for s in STAGES if engine(name).runs(s))


def triggers() -> tuple[str, ...]:
    """Every execution mode an engine has, each once, in :data:`NAMES`' order."""
    modes: dict[str, None] = {}
    for found in engines():
        for support in found.stages.values():
            modes.update(dict.fromkeys(support.triggers))
    return tuple(modes)


def faults() -> tuple[str, ...]:
    """Every fault of an engine's own processes, each once, in :data:`NAMES`' order."""
    return tuple(dict.fromkeys(fault for found in engines() for fault in found.faults))


def job(found: Engine[Any]) -> Callable[..., int]:
    """The engine's job function, ``run`` of its job module (an
    :data:`engines.process.JobFunction`), imported now: in the process that runs the job."""
    run: Callable[..., int] = importlib.import_module(found.job).run
    return run


def smoke(found: Engine[Any]) -> ReadBack:
    """The engine's ``read_back`` (:attr:`engines.base.Engine.smoke`), imported now;
    ConfigError for an engine without one."""
    if found.smoke is None:
        raise ConfigError(f"{found.title} has no smoke test")
    read_back: ReadBack = importlib.import_module(found.smoke).read_back
    return read_back


def smoke_default() -> str:
    """The engine ``stagebench smoke`` reads back with when none is named: the first that
    has a smoke test."""
    return next(found.name for found in engines() if found.smoke is not None)
