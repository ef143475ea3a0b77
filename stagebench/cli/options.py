"""Which configuration fields the commands take as options: read by the commands'
parsers and handlers alike.

A command's parser turns each field named here into an option of the same dest
(:mod:`stagebench.cli.fields`); its handler turns the parsed values back into
configuration with the same names. As light as the parsers, since ``--help`` builds them.
"""

import argparse
import dataclasses
from typing import Any

from engines.config import PipelineConfig
from engines.registry import engines
from evaluator.config import EvaluatorConfig
from ground.errors import ConfigError
from publisher.config import PublisherConfig
from stagebench.config.layers import ENGINE_TABLE, SET, parse_set
from stagebench.config.settings import RunConfig


def _names(cls: Any, *left_out: str) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in left_out)


RUN_FIELDS = _names(RunConfig, "stage", "bootstrap")
"""The ``[run]`` keys of run, suite, capacity and config show; each command words its
stage itself, and ``--bootstrap`` is every Kafka command's."""

APPLICATION_FIELDS = ("application", "app_warmup_s", "app_warmup_rate", "warm_settle_window_s")
"""``[run]`` keys of the Spark application a suite's runs or a capacity search's probes
share, which ``run`` does not take (its run starts a job of its own)."""

PUBLISH_FIELDS = _names(PublisherConfig)
"""``stagebench publish`` takes every publisher setting."""

PIPELINE_BASICS = ("impl", "speed_topic", "flow_topic")
"""``stagebench pipeline`` options whose argparse default is the config's."""
PIPELINE_TUNING = _names(
    PipelineConfig,
    *PIPELINE_BASICS,
    *("stage", "output_topic", "run_id", "bootstrap", "checkpoint_dir", "settings"),
)
"""``stagebench pipeline`` options that, left out, keep the config's default; the fields
left out here have options of their own (``--stage``, ``--run-dir``, ``--conf``, …)."""

EVALUATE_FIELDS = _names(EvaluatorConfig)
"""``stagebench evaluate`` takes every evaluator setting."""


def engine_options() -> tuple[tuple[str, type, str], ...]:
    """The engines' settings that run, suite, capacity and ``config show`` take as
    options (``option`` in a field's metadata: True, Spark's ``--master``, or the option's
    own name, Flink's ``--flink-cluster``), as (section, settings class, field)."""
    return tuple(
        (f"{ENGINE_TABLE}.{found.name}", found.settings, field.name)
        for found in engines()
        if found.settings is not None
        for field in dataclasses.fields(found.settings)
        if field.metadata.get("option")
    )


def run_overrides(args: argparse.Namespace, **extra: Any) -> dict[str, dict[str, Any]]:
    """The command line's ``[run]`` values, engine options and ``--set`` tables (only
    those given); ConfigError when ``--set`` sets a key an option also sets."""
    values = {key: getattr(args, key, None) for key in (*RUN_FIELDS, "bootstrap")} | extra
    overrides = {"run": {key: value for key, value in values.items() if value is not None}}
    options: dict[tuple[str, str], str] = {}
    for section, _, name in engine_options():
        if (value := getattr(args, name, None)) is not None:
            overrides.setdefault(section, {})[name] = value
            options[(section, name)] = name
    for section, table in parse_set(getattr(args, "set", None) or ()).items():
        for key, value in table.items():
            if (section, key) in options:
                raise ConfigError(
                    f"{SET} {section}.{key} and its option both set [{section}] {key}: give one"
                )
            overrides.setdefault(section, {})[key] = value
    return overrides
