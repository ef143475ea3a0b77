"""``stagebench pipeline``: run a stage's job (its engine's pipeline up to that stage) here.

The options become a :class:`PipelineConfig`, written to ``RUN_DIR/pipeline.json``
as a run would write it; the job then reads it like any other.
"""

import argparse
import dataclasses
import typing
from pathlib import Path
from typing import Any

from engines import process, registry
from engines.config import PipelineConfig
from engines.registry import engines
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import STAGES
from stagebench.cli.fields import add_field
from stagebench.cli.options import PIPELINE_BASICS, PIPELINE_TUNING
from stagebench.cli.shared import Subparsers, add_bootstrap
from stagebench.config.layers import option_name
from stagebench.run.job import write_pipeline_config


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "pipeline",
        help="run an engine's pipeline up to and including a stage",
        description="Run the pipeline of a stream engine (--engine; Spark unless the stage "
        "is the floor) up to and including STAGE, reading the speed and flow topics and "
        "writing the stage's outputs (JSON with input broker timestamps) to the output "
        "topic. Writes RUN_DIR/pipeline.json, the configuration the job reads (for "
        "Spark, spark-submit can run the same job: docs/spark.md). "
        "Stops on SIGTERM/SIGINT or after --max-seconds.",
    )
    parser.add_argument("--stage", required=True, choices=STAGES, help="last stage (required)")
    parser.add_argument("--output-topic", required=True, help="output topic (required)")
    parser.add_argument(
        "--run-id", help="run id written into every output (default: the run directory's name)"
    )
    parser.add_argument(
        "--run-dir",
        required=True,
        type=Path,
        help="directory for pipeline.json, engine_progress.jsonl, pipeline.ready (required)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        type=Path,
        help="fresh checkpoint directory (default: RUN_DIR/checkpoint)",
    )
    add_bootstrap(parser)
    for name in PIPELINE_BASICS:
        add_field(parser, PipelineConfig, name, keep_default=True)
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="stop after this many seconds (default: run until SIGTERM/SIGINT)",
    )
    for name in PIPELINE_TUNING:
        add_field(parser, PipelineConfig, name)
    for found in engines():
        if found.settings is not None:
            group = parser.add_argument_group(f"{found.whose} settings ([engine.{found.name}])")
            for field in dataclasses.fields(found.settings):
                _add_setting(group, found.settings, field)
    parser.set_defaults(handler=run)


def _add_setting(
    group: argparse._ArgumentGroup, cls: type, field: "dataclasses.Field[Any]"
) -> None:
    """A setting's option; a table of strings (Spark's ``spark_conf``) is a repeatable
    ``KEY=VALUE`` under the name in its metadata's ``flag``."""
    if typing.get_origin(typing.get_type_hints(cls)[field.name]) is not dict:
        add_field(group, cls, field.name, keep_default=False)
        return
    group.add_argument(
        field.metadata.get("flag", option_name(field.name)),
        dest=field.name,
        action="append",
        metavar="KEY=VALUE",
        help=f"{field.metadata['help']}; repeatable (default: none)",
    )


def _pairs(option: str, pairs: list[str]) -> dict[str, str]:
    table = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects KEY=VALUE, got {pair!r}")
        table[key.strip()] = value
    return table


def _settings(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The engine settings given on the command line (``cls``'s fields)."""
    given: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        value = getattr(args, field.name, None)
        if isinstance(value, list):
            value = _pairs(field.metadata.get("flag", option_name(field.name)), value)
        if value is not None:
            given[field.name] = value
    return given


def config_from_args(args: argparse.Namespace, bootstrap: str) -> PipelineConfig:
    """The PipelineConfig the arguments describe (validated)."""

    run_dir: Path = args.run_dir
    mapping: dict[str, Any] = {
        "stage": args.stage,
        "impl": args.impl,
        "speed_topic": args.speed_topic,
        "flow_topic": args.flow_topic,
        "output_topic": args.output_topic,
        "run_id": args.run_id or run_dir.name,
        "bootstrap": bootstrap,
        "checkpoint_dir": str(args.checkpoint_dir or run_dir / "checkpoint"),
    }
    for field in PIPELINE_TUNING:
        value = getattr(args, field)
        if value is not None:
            mapping[field] = value
    found = registry.chosen(mapping.get("engine"), args.stage)
    if found.settings is not None:
        mapping["settings"] = _settings(args, found.settings)
    return from_mapping(PipelineConfig, mapping, "pipeline")


def run(args: argparse.Namespace) -> int:
    from stagebench.run.bootstrap import resolve

    # validate everything before resolving Kafka, which may start the embedded broker
    config = config_from_args(args, args.bootstrap or "unresolved")
    config = dataclasses.replace(config, bootstrap=resolve(args.bootstrap))
    write_pipeline_config(args.run_dir, config)
    job = registry.job(registry.chosen(config.engine, config.stage))
    return job(config, args.run_dir, args.max_seconds, process.stop_event(), False)
