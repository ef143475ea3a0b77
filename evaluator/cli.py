"""``stagebench evaluate``: evaluate a run directory, or any output/input topics."""

import argparse
import json
import logging
import uuid
from pathlib import Path

from evaluator.config import EvaluatorConfig
from evaluator.run_info import RunInfo, load_run
from stagebench.cli_args import add_bootstrap
from stagebench.config import from_mapping
from stagebench.errors import EvaluationError
from stagebench.schema import STAGES

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="compute latencies of a run from broker timestamps",
        description="Read a run's output topic and input topics, compute per-output latency "
        "(output LogAppendTime minus the latest/earliest input LogAppendTime), completeness "
        "and throughput, and write summary.json, latencies.parquet, timeseries.csv, plots and "
        "report.md. Give a run directory (with run.json) or --output-topic and --stage.",
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
    parser.add_argument(
        "--warmup-s",
        type=float,
        help="seconds trimmed after the first input (default: 10 %% of the run; 0: none)",
    )
    parser.add_argument(
        "--end-cut-s",
        type=float,
        default=0.0,
        help="seconds trimmed before the last input (default: 0)",
    )
    parser.add_argument(
        "--engine",
        choices=("pandas", "spark"),
        default="pandas",
        help="evaluate in pandas, or as a Spark batch job for runs too big for memory "
        "(default: pandas)",
    )
    parser.add_argument(
        "--sliding-window-s",
        type=int,
        default=3,
        help="sliding window length of the run, seconds (default: 3)",
    )
    parser.add_argument(
        "--log-scale", action="store_true", help="log-scale latency plots (default: off)"
    )
    parser.add_argument(
        "--no-plots", action="store_true", help="skip the PNG plots (default: draw them)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite an existing summary.json (default: refuse)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    info = _run_info(args)
    out_dir = args.out or args.run_dir
    if out_dir is None:
        raise EvaluationError("no output directory: give RUN_DIR or --out")
    config = from_mapping(
        EvaluatorConfig,
        {
            "warmup_s": args.warmup_s,
            "end_cut_s": args.end_cut_s,
            "engine": args.engine,
            "log_scale": args.log_scale,
            "sliding_window_s": args.sliding_window_s,
            "plots": not args.no_plots,
        },
        "evaluator",
    )
    from evaluator import evaluate
    from stagebench.bootstrap import resolve

    bootstrap = resolve(args.bootstrap)

    summary = evaluate(bootstrap, info, config, Path(out_dir), overwrite=args.force)
    lat, rec = summary["latency_ms"], summary["records"]
    print(
        json.dumps(
            {
                "out": str(out_dir),
                "stage": info.stage,
                "p50_ms": lat["p50"],
                "p99_ms": lat["p99"],
                "outputs": rec["outputs"],
                "expected": rec["expected"],
                "missing": rec["missing"],
                "duplicates": rec["duplicates"],
                "negative": rec["negative"],
            }
        )
    )
    for warning in summary["warnings"]:
        print(f"WARNING: {warning}")
    return 0


def _run_info(args: argparse.Namespace) -> RunInfo:
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
    if args.run_dir is not None and (args.run_dir / "run.json").exists():
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
    return RunInfo(id=f"adhoc-{uuid.uuid4().hex[:8]}", **overrides)
