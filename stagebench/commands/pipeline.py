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
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.kafka.resolve import resolve
from stagebench.engine import write_pipeline_config
from stagebench.options import PIPELINE_TUNING


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

    # validate everything before resolving Kafka, which may start the embedded broker
    config = config_from_args(args, args.bootstrap or "unresolved")
    config = dataclasses.replace(config, bootstrap=resolve(args.bootstrap))
    write_pipeline_config(args.run_dir, config)
    job = registry.job(registry.chosen(config.engine, config.stage))
    return job(config, args.run_dir, args.max_seconds, process.stop_event(), False)
