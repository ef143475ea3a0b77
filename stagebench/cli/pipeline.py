"""``stagebench pipeline``: run a stage's job (its engine's pipeline up to that stage) here.

The options become a :class:`PipelineConfig`, written to ``RUN_DIR/pipeline.json``
as a run would write it; the job then reads it like any other.
"""

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from engines import process, registry
from engines.config import PipelineConfig
from engines.registry import stages_of
from ground.config import from_mapping
from ground.errors import ConfigError
from stagebench.cli.fields import add_field
from stagebench.cli.options import PIPELINE_BASICS, PIPELINE_TUNING
from stagebench.cli.shared import Subparsers, add_bootstrap
from stagebench.run.job import write_pipeline_config


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "pipeline",
        help="run the Spark pipeline up to and including a stage",
        description="Run the Spark pipeline up to and including STAGE, reading the speed and "
        "flow topics and writing the stage's outputs (JSON with input broker timestamps) to "
        "the output topic. Writes RUN_DIR/pipeline.json, the configuration the job reads "
        "(spark-submit engines/spark/job.py --config RUN_DIR/pipeline.json runs the same job). "
        "Stops on SIGTERM/SIGINT or after --max-seconds.",
    )
    parser.add_argument(
        "--stage", required=True, choices=stages_of("spark"), help="last stage (required)"
    )
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
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark conf, overrides every other setting; repeatable (default: none)",
    )
    for name in PIPELINE_TUNING:
        add_field(parser, PipelineConfig, name)
    parser.set_defaults(handler=run)


def _spark_conf(pairs: list[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


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
        "master": args.master,
        "spark_conf": _spark_conf(args.conf),
    }
    for field in PIPELINE_TUNING:
        value = getattr(args, field)
        if value is not None:
            mapping[field] = value
    return from_mapping(PipelineConfig, mapping, "pipeline")


def run(args: argparse.Namespace) -> int:
    from ground.kafka.resolve import resolve

    # validate everything before resolving Kafka, which may start the embedded broker
    config = config_from_args(args, args.bootstrap or "unresolved")
    config = dataclasses.replace(config, bootstrap=resolve(args.bootstrap))
    write_pipeline_config(args.run_dir, config)
    job = registry.job(registry.chosen(config.engine, config.stage))
    return job(config, args.run_dir, args.max_seconds, process.stop_event(), False)
