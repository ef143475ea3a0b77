"""``stagebench evaluate``: evaluate a run directory, or any output/input topics."""

import argparse
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.config import EvaluatorConfig
from ground import rundir
from ground.config import from_mapping
from ground.errors import EvaluationError
from ground.stages import STAGES
from stagebench.cli.fields import add_field, default_text
from stagebench.cli.options import EVALUATE_FIELDS
from stagebench.cli.shared import Subparsers, add_bootstrap, flag

if TYPE_CHECKING:  # pandas, which this module leaves to the command that runs
    from evaluator.model.run_info import RunInfo


REMOVED = frozenset({"plots", "log_scale", "engine"})
"""Evaluator settings that older runs' config.json holds and the evaluator no longer has."""


def add(sub: Subparsers) -> None:
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evaluator.evaluation import evaluate
    from stagebench.report.html import write as write_page
    from stagebench.run.bootstrap import resolve

    info = _run_info(args)
    out_dir = args.out or args.run_dir
    if out_dir is None:
        raise EvaluationError("no output directory: give RUN_DIR or --out")
    # the run's own settings, so that evaluating a run again gives the same numbers;
    # options given on the command line win
    given = {name: getattr(args, name) for name in EVALUATE_FIELDS}
    own = {k: v for k, v in info.config.get("evaluator", {}).items() if k not in REMOVED}
    values = {**own, **{k: v for k, v in given.items() if v is not None}}
    config = from_mapping(EvaluatorConfig, values, "evaluator")
    bootstrap = resolve(args.bootstrap)

    summary = evaluate(
        bootstrap, info, config, Path(out_dir), overwrite=args.force, run_dir=args.run_dir
    )
    lat, rec = summary.latency_ms, summary.records
    print(
        json.dumps(
            {
                "out": str(out_dir),
                "stage": info.stage,
                "p50_ms": lat["p50"],
                "p99_ms": lat["p99"],
                "outputs": rec.outputs,
                "expected": rec.expected,
                "missing": rec.missing,
                "duplicates": rec.duplicates,
                "negative": rec.negative,
            }
        )
    )
    for warning in summary.warnings:
        print(f"WARNING: {warning}")
    print(f"report: {write_page(Path(out_dir)).describe()}")
    return 0


def _run_info(args: argparse.Namespace) -> "RunInfo":
    from evaluator.model.run_info import RunInfo, load_run

    overrides = {
        "output_topic": args.output_topic,
        "stage": args.stage,
        "impl": args.impl,
        "input_topics": (
            tuple(t for t in args.input_topics.split(",") if t)
            if args.input_topics is not None
            else None
        ),
    }
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if args.run_dir is not None and (args.run_dir / rundir.RUN).exists():
        base = load_run(args.run_dir)
        values = {**base.__dict__, **overrides}
        return RunInfo(**values)
    if args.run_dir is not None and not overrides:
        load_run(args.run_dir)  # raises the "not a run directory" error
    missing = [k for k in ("output_topic", "stage") if k not in overrides]
    if missing:
        raise EvaluationError(
            "no run.json: give --" + " and --".join(m.replace("_", "-") for m in missing)
        )
    # topics of a job stagebench did not start: what its outputs do not carry of their
    # inputs is taken from the inputs (docs/own-pipeline.md)
    return RunInfo(id=f"adhoc-{uuid.uuid4().hex[:8]}", carries_inputs=False, **overrides)
