"""``stagebench pipeline``: run the Spark pipeline up to and including a stage."""

import argparse
import dataclasses
from pathlib import Path
from typing import Any

DESCRIPTION = (
    "Run the Spark pipeline up to and including STAGE, reading the speed and flow topics "
    "and writing the stage's outputs (JSON with input broker timestamps) to the output "
    "topic. Stops on SIGTERM/SIGINT or after --max-seconds."
)

# (option, PipelineConfig field, type, help); defaults come from PipelineConfig
TUNING: list[tuple[str, str, Any, str]] = [
    (
        "--trigger",
        "trigger",
        str,
        "processing-time or real-time (Spark real-time mode; "
        "ingest and parse only) (default: processing-time)",
    ),
    (
        "--real-time-checkpoint",
        "real_time_checkpoint",
        str,
        "real-time mode checkpoint interval, a Spark interval such as '10 seconds' "
        "(minimum 5 s; not a latency) (default: 5 minutes)",
    ),
    (
        "--trigger-interval-ms",
        "trigger_interval_ms",
        int,
        "processing-time trigger interval (default: 0, next batch at once)",
    ),
    (
        "--shuffle-partitions",
        "shuffle_partitions",
        int,
        "spark.sql.shuffle.partitions (default: number of cores)",
    ),
    (
        "--watermark-delay-ms",
        "watermark_delay_ms",
        int,
        "allowed lateness of the observation time (default: 1000)",
    ),
    (
        "--join-range-ms",
        "join_range_ms",
        int,
        "event-time range of the join condition (default: 0)",
    ),
    (
        "--max-offsets-per-trigger",
        "max_offsets_per_trigger",
        int,
        "Kafka source maxOffsetsPerTrigger (default: unlimited)",
    ),
    ("--starting-offsets", "starting_offsets", str, "earliest or latest (default: earliest)"),
    ("--window-length-ms", "window_length_ms", int, "sliding window length (default: 3000)"),
    ("--window-slide-ms", "window_slide_ms", int, "sliding window slide (default: 1000)"),
    ("--lookback-short-ms", "lookback_short_ms", int, "short-term change lookback (default: 1000)"),
    ("--lookback-long-ms", "lookback_long_ms", int, "long-term change lookback (default: 2000)"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pipelines.config import PipelineConfig
    from stagebench.schema import STAGES

    parser.add_argument("--stage", required=True, choices=STAGES, help="last stage (required)")
    parser.add_argument(
        "--impl",
        choices=("builtin", "custom"),
        default="builtin",
        help="window implementation: Spark's operators or transformWithStateInPandas "
        "(custom: tumbling and sliding only) (default: builtin)",
    )
    parser.add_argument("--speed-topic", default="speed", help="speed topic (default: speed)")
    parser.add_argument("--flow-topic", default="flow", help="flow topic (default: flow)")
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
    parser.add_argument(
        "--bootstrap",
        help="Kafka bootstrap servers (default: STAGEBENCH_BOOTSTRAP, else the embedded broker)",
    )
    default_master = PipelineConfig.__dataclass_fields__["master"].default
    parser.add_argument(
        "--master",
        default=default_master,
        help=f"Spark master, e.g. spark://host:7077 (default: {default_master}, the "
        "pipeline configuration's default: two local cores, leaving the others to Kafka "
        "and the publisher)",
    )
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
    for option, _, kind, help_text in TUNING:
        parser.add_argument(option, type=kind, help=help_text)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pipeline",
        help="run the Spark pipeline up to and including a stage",
        description=DESCRIPTION,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def _spark_conf(pairs: list[str]) -> dict[str, str]:
    from stagebench.errors import ConfigError

    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf


def config_from_args(args: argparse.Namespace, bootstrap: str) -> Any:
    """The PipelineConfig the arguments describe (validated)."""
    from pipelines.config import PipelineConfig
    from stagebench.config import from_mapping

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
    for _, field, _, _ in TUNING:
        value = getattr(args, field)
        if value is not None:
            mapping[field] = value
    return from_mapping(PipelineConfig, mapping, "pipeline")


def run(args: argparse.Namespace) -> int:
    from pipelines import job
    from stagebench.bootstrap import resolve

    # validate everything before resolving Kafka, which may start the embedded broker
    config = config_from_args(args, args.bootstrap or "unresolved")
    config = dataclasses.replace(config, bootstrap=resolve(args.bootstrap))
    return job.run(config, args.run_dir, args.max_seconds)
