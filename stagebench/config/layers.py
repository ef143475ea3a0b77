"""The effective configuration of a run: defaults ← TOML file ← command line.

:class:`RunConfig` is the ``[run]`` table: what to run and for how long. A TOML
file (``--config``) has one table per concern: ``[run]``,
``[publisher]``, ``[pipeline]``, ``[evaluator]``, and ``[engine.<name>]`` for each
engine's own settings (:class:`engines.config.EngineSettings`), whose keys are the fields of
the concern's configuration class. Unknown tables and keys are errors. Keys
that a run decides itself (topics, run id, …) or that ``[run]`` owns (rate,
duration, stage, …) are refused in the other tables, so every setting has
exactly one place. Every value remembers its source for ``config show``.
"""

import dataclasses
import tomllib
import typing
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.config import PipelineConfig
from engines.registry import engines
from evaluator.config import EvaluatorConfig
from ground import files
from ground.config import as_dict, check_types, fits, from_mapping
from ground.errors import ConfigError
from publisher.config import PublisherConfig
from stagebench.config import profiles
from stagebench.config.settings import RunConfig

DEFAULT = "default"
CLI = "command line"
SET = "--set"
"""The option that sets any key of a table on the command line: ``--set TABLE.KEY=VALUE``."""


def option_name(name: str) -> str:
    """``duration_s`` → ``--duration``: an option's help states its unit."""
    return "--" + name.removesuffix("_s").replace("_", "-")


# keys a run sets itself or takes from [run]: section -> key -> where it comes from
DERIVED: dict[str, dict[str, str]] = {
    "publisher": {
        "rate": "[run] rate",
        "duration_s": "[run] duration_s",
        "workload": "[run] workload",
        "speed_topic": "the run's fresh topics",
        "flow_topic": "the run's fresh topics",
    },
    "pipeline": {
        "stage": "[run] stage",
        "engine": "[run] engine",
        "impl": "[run] impl",
        "settings": "[engine.<name>] of the run's engine",
        "bootstrap": "[run] bootstrap",
        "output_topic": "the run's fresh topics",
        "speed_topic": "the run's fresh topics",
        "flow_topic": "the run's fresh topics",
        "run_id": "the run",
        "checkpoint_dir": "the run directory",
    },
    "evaluator": {
        "warmup_s": "[run] warmup_s",
        "sliding_window_s": "[pipeline] window_length_ms",
        "lookback_short_s": "[pipeline] lookback_short_ms",
        "lookback_long_s": "[pipeline] lookback_long_ms",
    },
}


ENGINE_TABLE = "engine"
"""``[engine.<name>]``: an engine's own settings, the section ``engine.<name>``."""


def section_classes() -> dict[str, type]:
    """The class of every section, by name; an engine's table is ``engine.<name>``."""
    return {
        "run": RunConfig,
        "publisher": PublisherConfig,
        "pipeline": PipelineConfig,
        **{
            f"{ENGINE_TABLE}.{found.name}": found.settings
            for found in engines()
            if found.settings is not None
        },
        "evaluator": EvaluatorConfig,
    }


@dataclass(frozen=True)
class Settings:
    """Explicitly set values per section, and where each came from."""

    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        return dict(self.values.get(name, {}))


def load(path: Path | None, overrides: dict[str, dict[str, Any]]) -> Settings:
    """Layer the TOML file at ``path`` (if any) and command-line ``overrides``."""
    classes = section_classes()
    values: dict[str, dict[str, Any]] = {name: {} for name in classes}
    sources: dict[str, dict[str, str]] = {name: {} for name in classes}
    layers: list[tuple[str, dict[str, Any]]] = []
    if path is not None:
        layers.append((f"file {path}", _read_toml(path)))
    layers.append((CLI, {k: v for k, v in overrides.items() if v}))
    for source, layer in layers:
        for section, table in _engine_tables(layer, source).items():
            if section not in classes:
                raise ConfigError(
                    f"unknown table [{section}] in {source} (known: {', '.join(classes)})"
                )
            if not isinstance(table, dict):
                raise ConfigError(f"[{section}] in {source} must be a table")
            known = {f.name for f in dataclasses.fields(classes[section])}
            for key, value in table.items():
                if key in DERIVED.get(section, {}):
                    raise ConfigError(
                        f"[{section}] {key} cannot be set: it comes from {DERIVED[section][key]}"
                    )
                if key not in known:
                    refuse_moved(section, key, source, classes)
                    raise ConfigError(
                        f"unknown key [{section}] {key} in {source} "
                        f"(known: {', '.join(sorted(known - set(DERIVED.get(section, {}))))})"
                    )
                earlier = values[section].get(key)
                given = source
                if isinstance(value, dict) and isinstance(earlier, dict):
                    # a table-valued key (spark_conf): the later layer's entries add to
                    # the earlier's, as --set engine.spark.spark_conf.KEY=VALUE does
                    value = {**earlier, **value}
                    given = f"{sources[section][key]}, {source}"
                values[section][key] = value
                sources[section][key] = given
    profiles.apply(values["run"].get("profile", "latency"), classes, values, sources)
    for section, cls in classes.items():
        check_types(cls, values[section], section)
        if section.startswith(f"{ENGINE_TABLE}.") and values[section]:
            from_mapping(cls, values[section], section)  # a table given is checked whole
    _own_job(values, sources)
    return Settings(values, sources)


def parse_set(pairs: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The tables that ``--set TABLE.KEY=VALUE`` options give, as a TOML file's tables
    would hold them: ``engine.flink.buffer_timeout_ms=100`` is ``[engine.flink]
    buffer_timeout_ms = 100``.

    VALUE is read as a TOML value (``100``, ``0.5``, ``true``, ``"text"``, ``[1, 2]``);
    where it is no TOML value, or not of its key's type while its key takes text, it is
    the text itself (``master=local[4]``). A key of a table-valued key (Spark's
    ``spark_conf``) follows it: ``engine.spark.spark_conf.spark.sql.shuffle.partitions=4``
    adds that entry. ``[run]``'s keys are options of their own. ConfigError names what is
    wrong; unknown keys and wrong types are :func:`load`'s to refuse."""
    classes = section_classes()
    tables_set = [name for name in classes if name != "run"]
    tables: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        path, sep, text = pair.partition("=")
        parts = path.strip().split(".")
        cut = next((i for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in classes), 0)
        if not sep or not cut or cut == len(parts):
            raise ConfigError(
                f"{SET} expects TABLE.KEY=VALUE with a table of {', '.join(tables_set)}, e.g. "
                f"{SET} engine.flink.buffer_timeout_ms=100; got {pair!r}"
            )
        section, key, entry = ".".join(parts[:cut]), parts[cut], ".".join(parts[cut + 1 :])
        if section == "run":
            raise ConfigError(
                f"{SET} {pair}: [run] {key} is an option of its own (see --help), not a {SET}"
            )
        hints = typing.get_type_hints(classes[section])
        hint = hints.get(key, Any)
        table = tables.setdefault(section, {})
        if not entry:
            table[key] = _value(text, hint)
            continue
        if typing.get_origin(hint) is not dict:
            raise ConfigError(f"{SET} {pair}: [{section}] {key} is no table of its own")
        item = typing.get_args(hint)[1] if typing.get_args(hint) else Any
        entries = table.setdefault(key, {})
        if not isinstance(entries, dict):
            raise ConfigError(f"{SET} {pair}: [{section}] {key} is set whole by another {SET}")
        entries[entry] = _value(text, item)
    return tables


def _value(text: str, hint: Any) -> Any:
    """``text`` as a TOML value, or as itself where that fits ``hint`` better."""
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    if not fits(value, hint) and fits(text, hint):
        return text
    return value


OWN_JOB = f"{ENGINE_TABLE}.command"


def _own_job(values: dict[str, dict[str, Any]], sources: dict[str, dict[str, str]]) -> None:
    """A job's command given (``--job``, ``[engine.command] job``): the command engine runs
    the run, as the stage ``job`` unless a stage is named; ConfigError when another engine
    is named."""
    job = values.get(OWN_JOB, {}).get("job")
    engine = values["run"].get("engine")
    if not job:
        return
    if engine and engine != "command":
        raise ConfigError(
            f"a job's command ({sources[OWN_JOB]['job']}) runs as the engine command, "
            f"not {engine} ({sources['run']['engine']}): leave one out"
        )
    derived = f"{sources[OWN_JOB]['job']} (a job's command given)"
    for key, value in (("engine", "command"), ("stage", "job")):
        if key not in values["run"]:
            values["run"][key] = value
            sources["run"][key] = derived


def _engine_tables(layer: dict[str, Any], source: str) -> dict[str, Any]:
    """``layer`` with TOML's ``[engine.spark]`` (``{"engine": {"spark": {…}}}``) as the
    section ``engine.spark``."""
    tables = {key: value for key, value in layer.items() if key != ENGINE_TABLE}
    nested = layer.get(ENGINE_TABLE, {})
    if not isinstance(nested, dict):
        raise ConfigError(f"[{ENGINE_TABLE}] in {source} must hold a table per engine")
    for name, table in nested.items():
        tables[f"{ENGINE_TABLE}.{name}"] = table
    return tables


def refuse_moved(section: str, key: str, source: str, classes: dict[str, type]) -> None:
    """ConfigError naming an engine's table when ``key`` is one of its settings: runs
    made before engines had tables kept Spark's in ``[pipeline]`` and ``[run]``."""
    for table, cls in classes.items():
        names = {f.name for f in dataclasses.fields(cls)}
        if table.startswith(f"{ENGINE_TABLE}.") and key in names:
            raise ConfigError(f"[{section}] {key} in {source} is now [{table}] {key}")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(files.read_text(Path(path), "config file"))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"config file {path} is not valid TOML: {err}") from err


def engine_tables(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every engine's table (``engine.<name>``) as a run of that engine records it in
    config.json, defaults included."""
    return {
        section: as_dict(from_mapping(cls, settings.section(section), section))
        for section, cls in section_classes().items()
        if section.startswith(f"{ENGINE_TABLE}.")
    }


def effective(settings: Settings) -> list[tuple[str, str, Any, str]]:
    """(section, key, value, source) of every setting, defaults included."""
    rows = []
    for section, cls in section_classes().items():
        for f in dataclasses.fields(cls):
            if (section, f.name) == ("pipeline", "settings"):
                continue  # each engine's table has rows of its own
            if f.name in settings.values.get(section, {}):
                rows.append((section, f.name, settings.values[section][f.name],
                             settings.sources[section][f.name]))  # fmt: skip
            elif f.name in DERIVED.get(section, {}):
                rows.append((section, f.name, None, f"from {DERIVED[section][f.name]}"))
            elif f.default is not dataclasses.MISSING:
                rows.append((section, f.name, f.default, DEFAULT))
            elif f.default_factory is not dataclasses.MISSING:
                rows.append((section, f.name, f.default_factory(), DEFAULT))
    return rows
