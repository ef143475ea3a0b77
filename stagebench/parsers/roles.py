"""The parsers of the commands that run one role alone: publish, pipeline, evaluate.

Their settings are the role's configuration fields (:mod:`stagebench.parsers.fields`);
the options here are what a run would otherwise decide: topics, directories, Kafka.
"""

from pathlib import Path

from engines.config import PipelineConfig
from engines.registry import stages_of
from evaluator.config import EvaluatorConfig
from ground.stages import STAGES
from publisher.config import PublisherConfig
from stagebench.options import EVALUATE_FIELDS, PIPELINE_BASICS, PIPELINE_TUNING, PUBLISH_FIELDS
from stagebench.parsers.fields import add_field, default_text
from stagebench.parsers.shared import Subparsers, add_bootstrap, flag, handler


def publish(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "publish",
        help="publish NDW-style speed/flow observations at a set rate",
        description="Publish synthetic NDW-style speed and flow observations (or replay a file) "
        "on an open-loop schedule. messages/s = 2 × lanes in total × data minutes per second: "
        "give --rate and the locations are derived, or --locations and the rate is derived.",
    )
    add_bootstrap(parser)
    size = parser.add_mutually_exclusive_group()
    for name in PUBLISH_FIELDS:
        add_field(size if name in ("rate", "locations") else parser, PublisherConfig, name)
    parser.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of topics this command creates when missing (default: %(default)s)",
    )
    parser.add_argument("--summary", type=Path, help="write the JSON summary here (default: none)")
    handler(parser, "publish:run")


def pipeline(sub: Subparsers) -> None:
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
    handler(parser, "pipeline:run")


def evaluate(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "evaluate",
        help="compute latencies of a run from broker timestamps",
        description="Read a run's output topic and input topics, compute per-output latency "
        "(output LogAppendTime minus the latest/earliest input LogAppendTime), completeness "
        "and throughput, and write summary.json, latencies.parquet, timeseries.csv, report.md "
        "and report.html. Give a run directory (with run.json) or --output-topic and --stage.",
    )
    parser.add_argument(
        "run_dir",
        nargs="?",
        type=Path,
        help="run directory with run.json; results are written there (default: none, "
        "then --output-topic, --stage and --out are required)",
    )
    parser.add_argument("--output-topic", help="output topic (default: from run.json)")
    parser.add_argument(
        "--input-topics",
        help="comma-separated input topics (default: from run.json; none: no completeness)",
    )
    parser.add_argument("--stage", choices=STAGES, help="stage of the run (default: from run.json)")
    parser.add_argument(
        "--impl", help="implementation label (default: from run.json, else builtin)"
    )
    add_bootstrap(parser)
    parser.add_argument("--out", type=Path, help="output directory (default: RUN_DIR)")
    for name in EVALUATE_FIELDS:
        own = f"the run's own (from run.json), else {default_text(EvaluatorConfig, name)}"
        add_field(parser, EvaluatorConfig, name, "--" + name.replace("_", "-"), shown=own)
    flag(parser, "--force", "overwrite an existing summary.json (default: refuse)")
    handler(parser, "evaluate:run")
