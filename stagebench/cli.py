"""The ``stagebench`` command: every subcommand's options in this one parser module.

The parser is cheap to build: for defaults and choices it imports only the
configuration dataclasses, the stage, workload and fault tables and the option
tables the handlers share (:mod:`stagebench.options`). Each command's handler
lives in :mod:`stagebench.commands` and is imported only when its command runs,
so ``--help`` loads neither pandas, numpy nor pyspark (a test asserts it).
This module is the one place that turns a :class:`StagebenchError` into
``ERROR: …`` and an exit code.
"""

import argparse
import importlib
import logging
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from evaluator.config import EvaluatorConfig
from ground import envvars
from ground.errors import StagebenchError
from ground.kafka import MAX_BROKERS
from ground.stages import IMPLS, SPARK_STAGES, STAGES
from pipelines.config import PipelineConfig
from publisher.config import DEFAULT_RATE, PublisherConfig
from publisher.workload import NAMES as WORKLOADS
from stagebench import __version__
from stagebench.options import PIPELINE_TUNING, RUN_OPTIONS
from stagebench.probe_settings import (
    PROBE_DEFAULTS,
    PROBE_DURATION_S,
    PROBE_LEAD_IN_S,
    PROBE_WARMUP_MAX_S,
)
from stagebench.settings import RunConfig

log = logging.getLogger(__name__)

# --- options several commands share -------------------------------------------------


def add_bootstrap(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap",
        metavar="HOST:PORT",
        help=f"Kafka to use (default: ${envvars.BOOTSTRAP}, else the running embedded broker, "
        "else a newly started one)",
    )


def _handler(parser: argparse.ArgumentParser, target: str) -> None:
    """``target`` is ``module:function`` under stagebench.commands, imported when run."""
    parser.set_defaults(handler=target)


_R = RunConfig()
_P = PipelineConfig.__dataclass_fields__


def add_run_arguments(
    parser: argparse.ArgumentParser,
    skip: tuple[str, ...] = (),
    defaults: dict[str, str] | None = None,
) -> None:
    """The ``[run]`` options, but ``skip``: keys the command sets itself; ``defaults``:
    keys whose default the command changes (shown in the help instead of RunConfig's)."""
    parser.add_argument(
        "--config", type=Path, help="TOML file with [run], [publisher], [pipeline], [evaluator]"
    )
    parser.add_argument(
        "--impl",
        choices=IMPLS,
        help="window implementation: Spark's operators or transformWithStateInPandas "
        f"(default: {_R.impl})",
    )
    if "workload" not in skip:
        parser.add_argument(
            "--workload",
            choices=WORKLOADS,
            help="latency: a constant rate; single-burst: a backlog published before the job "
            "starts; periodic-burst: a burst every 10 s on top of the rate; ramp: rising steps; "
            "faulty-event: the constant rate plus malformed records ([publisher] "
            f"faulty_fraction of all, default {PublisherConfig.faulty_fraction:g}) "
            f"(default: {_R.workload})",
        )
    for option, key, kind, help_text in RUN_OPTIONS:
        if key in skip:
            continue
        if defaults and key in defaults:
            help_text = re.sub(r"\(default: [^)]*\)$", f"(default: {defaults[key]})", help_text)
        metavar = option.lstrip("-").upper().replace("-", "_")
        parser.add_argument(option, dest=key, metavar=metavar, type=kind, help=help_text)
    add_bootstrap(parser)


# --- one function per command ---------------------------------------------------------


def _broker(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "broker",
        help="start, stop or inspect the embedded Kafka broker",
        description="A real Apache Kafka (KRaft) on 127.0.0.1 for machines without Docker or a "
        "Kafka of their own: one node, or a cluster of several (--brokers). Its jars are "
        "resolved from Maven Central with PySpark's Ivy on first use and cached under "
        "~/.cache/stagebench.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start the broker (reuses a running one)")
    start.add_argument(
        "--brokers",
        type=int,
        default=1,
        help=f"nodes, ids 1..N, each a broker and a controller of one quorum, with its own "
        f"ports, data and logs (1 to {MAX_BROKERS}; default: %(default)s)",
    )
    start.add_argument("--port", type=int, help="node 1's listener port (default: a free port)")
    start.add_argument(
        "--heap", help="JVM heap per node, fixed (default: 1G, 512M each for several nodes)"
    )
    start.add_argument("--json", action="store_true", help="print the broker state as JSON")
    _handler(start, "broker:start")
    stop = actions.add_parser("stop", help="stop the broker and delete its data")
    _handler(stop, "broker:stop")
    status = actions.add_parser("status", help="is it running, where, which version")
    status.add_argument("--json", action="store_true", help="print the broker state as JSON")
    _handler(status, "broker:status")


def _topics(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "topics",
        help="create or check benchmark topics (LogAppendTime, leader)",
        description="Benchmark topics use message.timestamp.type=LogAppendTime and have every "
        "partition led by one broker, so all timestamps come from one clock "
        "(docs/method.md#clock).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("create", "create the speed, flow and output topics of a run"),
        ("check", "verify timestamp type and leaders; exit 1 on any problem"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "names",
            nargs="*",
            metavar="TOPIC",
            help="topic names (default: the speed, flow and output topics of --run-id)",
        )
        action.add_argument("--run-id", help="run whose topics to use (create: default a new id)")
        action.add_argument(
            "--leader", type=int, help="broker id that must lead every partition (default: lowest)"
        )
        add_bootstrap(action)
        _handler(action, f"topics:{name}")
    actions.choices["create"].add_argument(
        "--partitions", type=int, default=1, help="partitions per topic (default: %(default)s)"
    )
    actions.choices["create"].add_argument(
        "--replication",
        type=int,
        help="replicas per partition, min.insync.replicas one less "
        "(default: the broker count, at most 3)",
    )


def _smoke(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "smoke",
        help="check the whole chain: broker, topics, Spark reads Kafka",
        description="Produce a few records to a fresh topic and read them back with Spark's "
        "Kafka connector, checking that the broker stamped them (LogAppendTime).",
    )
    add_bootstrap(parser)
    parser.add_argument(
        "--messages", type=int, default=100, help="records to produce (default: %(default)s)"
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default: %(default)s)")
    _handler(parser, "smoke:run")


def _rates(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(r) for r in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated rates, got {text!r}") from err


def _publish(sub: argparse._SubParsersAction) -> None:
    d = PublisherConfig()
    p = sub.add_parser(
        "publish",
        help="publish NDW-style speed/flow observations at a set rate",
        description="Publish synthetic NDW-style speed and flow observations (or replay a file) "
        "on an open-loop schedule. messages/s = 2 × lanes in total × data minutes per second: "
        "give --rate and the locations are derived, or --locations and the rate is derived.",
    )
    add_bootstrap(p)
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--rate", type=float, help=f"messages/s over both topics (default {DEFAULT_RATE:g})"
    )
    size.add_argument("--locations", type=int, help="number of locations (default: from --rate)")
    p.add_argument(
        "--min-lanes", type=int, help=f"fewest lanes per location (default {d.min_lanes})"
    )
    p.add_argument("--max-lanes", type=int, help=f"most lanes per location (default {d.max_lanes})")
    p.add_argument("--seed", type=int, help=f"seed of the synthetic data (default {d.seed})")
    p.add_argument(
        "--time-scale",
        type=float,
        help=f"data minutes published per wall-clock second (default {d.time_scale:g})",
    )
    p.add_argument(
        "--start-minute",
        type=int,
        help=f"time of day of the first data minute, minutes after midnight "
        f"(default {d.start_minute})",
    )
    p.add_argument(
        "--workload", choices=WORKLOADS, help=f"shape of the load over time (default {d.workload})"
    )
    p.add_argument(
        "--burst-messages",
        type=int,
        help=f"periodic-burst: messages per burst (default {d.burst_messages})",
    )
    p.add_argument(
        "--burst-every",
        dest="burst_every_s",
        type=float,
        help=f"periodic-burst: seconds between bursts (default {d.burst_every_s:g})",
    )
    p.add_argument(
        "--burst-duration",
        dest="burst_duration_s",
        type=float,
        help=f"periodic-burst: seconds a burst is spread over, 0 = at once "
        f"(default {d.burst_duration_s:g})",
    )
    p.add_argument(
        "--backlog",
        dest="backlog_s",
        type=float,
        help=f"single-burst: seconds published at --backlog-rate first (default {d.backlog_s:g})",
    )
    p.add_argument(
        "--backlog-rate",
        type=float,
        help=f"single-burst: messages/s of the backlog (default {d.backlog_rate:g})",
    )
    p.add_argument(
        "--ramp-rates", type=_rates, help="ramp: comma-separated messages/s, one per step"
    )
    p.add_argument(
        "--ramp-step",
        dest="ramp_step_s",
        type=float,
        help=f"ramp: seconds per step (default {d.ramp_step_s:g})",
    )
    p.add_argument(
        "--faulty-fraction",
        type=float,
        help="faulty-event: share of all records that are malformed, of nine kinds in turn "
        f"(default {d.faulty_fraction:g})",
    )
    p.add_argument(
        "--duration",
        dest="duration_s",
        type=float,
        help="seconds to publish (default 60; single-burst: backlog + 60; ramp: all steps; "
        "--from-file: the whole file)",
    )
    p.add_argument("--max-messages", type=int, help="stop after this many messages (default: none)")
    p.add_argument("--acks", choices=("0", "1", "all"), help=f"producer acks (default {d.acks})")
    p.add_argument("--linger-ms", type=float, help=f"producer linger.ms (default {d.linger_ms:g})")
    p.add_argument("--speed-topic", help=f"topic of speed observations (default {d.speed_topic})")
    p.add_argument("--flow-topic", help=f"topic of flow observations (default {d.flow_topic})")
    p.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of topics this command creates when missing (default 1)",
    )
    p.add_argument(
        "--from-file",
        help="replay this file of observations: JSON lines of stagebench's messages, or an "
        "NDW export (detected; speed and flow twins paired) (default: synthetic)",
    )
    p.add_argument("--summary", type=Path, help="write the JSON summary here (default: none)")
    _handler(p, "publish:run")


def _pipeline(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "pipeline",
        help="run the Spark pipeline up to and including a stage",
        description="Run the Spark pipeline up to and including STAGE, reading the speed and "
        "flow topics and writing the stage's outputs (JSON with input broker timestamps) to "
        "the output topic. Writes RUN_DIR/pipeline.json, the configuration the job reads "
        "(spark-submit pipelines/job.py --config RUN_DIR/pipeline.json runs the same job). "
        "Stops on SIGTERM/SIGINT or after --max-seconds.",
    )
    parser.add_argument(
        "--stage", required=True, choices=SPARK_STAGES, help="last stage (required)"
    )
    parser.add_argument(
        "--impl",
        choices=IMPLS,
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
    add_bootstrap(parser)
    master = _P["master"].default
    parser.add_argument(
        "--master",
        default=master,
        help=f"Spark master, e.g. spark://host:7077 (default: {master}, two local cores, "
        "leaving the others to Kafka and the publisher)",
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
    for option, _, kind, help_text in PIPELINE_TUNING:
        parser.add_argument(option, type=kind, help=help_text)
    _handler(parser, "pipeline:run")


def _evaluate(sub: argparse._SubParsersAction) -> None:
    e = EvaluatorConfig()
    parser = sub.add_parser(
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
    own = "the run's own (from run.json), else"
    parser.add_argument(
        "--warmup-s",
        type=float,
        help=f"seconds trimmed after the first input or the run's start mark (default: {own} "
        "10 %% of the run; 0: none)",
    )
    parser.add_argument(
        "--end-cut-s",
        type=float,
        help=f"seconds trimmed before the last input (default: {own} {e.end_cut_s:g})",
    )
    parser.add_argument(
        "--engine",
        choices=("pandas", "spark"),
        help="evaluate in pandas, or as a Spark batch job for runs too big for memory "
        f"(default: {own} {e.engine})",
    )
    parser.add_argument(
        "--sliding-window-s",
        type=int,
        help=f"sliding window length of the run, seconds (default: {own} {e.sliding_window_s})",
    )
    for which in ("short", "long"):
        parser.add_argument(
            f"--lookback-{which}-s",
            type=int,
            help=f"the sliding stage's {which} lookback, seconds (default: {own} "
            f"{getattr(e, f'lookback_{which}_s')})",
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
    _handler(parser, "evaluate:run")


def _compare(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare runs: the stage table, an A/B comparison, or a regression check",
        description="Three comparisons. The stage table: one row per stage of evaluated runs, "
        "ordered by the stage ladder, with p50/p95/p99 and the increment over the previous "
        "stage (difference of percentiles); a suite's directory stands for its runs with "
        "their rounds. An A/B comparison (two runs of one stage, two suite directories, or "
        "--a DIR... --b DIR...): the settings that differ, and the change of p50 and p99 of "
        "each stage with a 95 %% interval and a verdict (faster, slower, no significant "
        "difference; withheld with fewer than 3 runs a side). A regression check "
        "(--baseline BASE NEW): exit 1 when NEW's p50 or p99 is significantly worse than "
        "BASE's by more than --max-regression, 0 otherwise, 2 when it cannot be made.",
    )
    parser.add_argument(
        "run_dirs",
        nargs="*",
        type=Path,
        metavar="DIR",
        help="evaluated run directories or suite directories (default: none)",
    )
    parser.add_argument(
        "--a", dest="a_dirs", nargs="+", type=Path, metavar="DIR",
        help="A/B: side A's runs or suites (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--b", dest="b_dirs", nargs="+", type=Path, metavar="DIR",
        help="A/B: side B's runs or suites (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="BASE",
        help="check the one DIR given (NEW, a run or a suite) against BASE (a run or a "
        "suite, its repeats the runs of that side) (default: no check)",
    )
    parser.add_argument(
        "--max-regression",
        metavar="PERCENT",
        help="with --baseline: the worsening of p50 or p99 allowed, e.g. 10%% (default: 0%%, "
        "any significant worsening fails)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON instead of text (default: text)"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print Markdown instead of text (default: text)"
    )
    parser.add_argument(
        "--plots",
        type=Path,
        metavar="DIR",
        help="stage table: also write the comparison plots into DIR (default: no plots)",
    )
    parser.add_argument(
        "--log-scale", action="store_true", help="log-scale distributions (default: off)"
    )
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="stage table: compare runs that differ in more than stage and implementation "
        "(rate, workload, settings), the differences printed above the table; A/B: let the "
        "runs within a side differ (default: refuse)",
    )
    _handler(parser, "compare:run")


def _history(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "history",
        help="list the runs, suites and capacity searches of a results directory",
        description="Every run, suite and capacity search is recorded when it ends in an "
        "index of its results directory (history.sqlite): time, stage, settings, commit, "
        "versions, machine and pace, p50 and p99 with intervals, trusted, steady, warnings. "
        "The index is rebuilt from the directories when it is missing or with --rebuild, so "
        "deleting it loses nothing.",
    )
    parser.add_argument(
        "--results", type=Path, help=f"the results directory (default: {_R.results_dir})"
    )
    parser.add_argument("--stage", choices=STAGES, help="only entries of this stage (default: all)")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only entries from this date or ISO time on, UTC unless it says otherwise "
        "(2026-11-26, 2026-11-26T15:00) (default: all)",
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only entries run with this setting, e.g. trigger_interval_ms=500 or "
        "pipeline.partitions=4; repeatable (default: none)",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="rebuild the index from the directories first "
        "(default: only when it is missing)"
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON (default: a table)")
    _handler(parser, "history:run")


def _report(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help="write report.html for results directories (runs, suites, capacity searches)",
        description="Draw one self-contained page, report.html, into each results directory "
        "given: a run's (latency through the warm-up and the measured period, its "
        "distribution, throughput, resources, warnings, conditions, configuration), a suite's "
        "(the stage ladder and its runs together) or a capacity search's (the probes on the "
        "offered rate and the deciding probes through time). The plots are interactive and "
        "their scripts embedded, so the page opens offline. run, suite, capacity and evaluate "
        "write it themselves; this draws it again, from the directory's files alone.",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="results directories: runs, suites, capacity searches (default: none; one at least)",
    )
    _handler(parser, "report:run")


def _run(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "run",
        help="one complete benchmark run of one stage",
        description="Fresh topics → Spark job up to STAGE → publisher → drain → evaluation. "
        "Prints the latency table and writes everything to results/<time>-<stage>-<id>/. "
        "Ctrl-C stops everything cleanly and keeps what was collected.",
    )
    parser.add_argument(
        "--stage", choices=STAGES, help=f"last stage of the pipeline (default: {_R.stage})"
    )
    add_run_arguments(parser)
    _handler(parser, "run:run")


def _suite(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "suite",
        help="run the stage ladder and print the increment table",
        description="Run each stage in turn with identical settings, then compare them: "
        "p50/p95/p99 per stage and the increment each adds over the previous stage. "
        "Writes results/<time>-suite-<id>/comparison.{json,md} and plots.",
    )
    parser.add_argument(
        "--stages",
        default=",".join(STAGES),
        help="comma-separated stages, in ladder order (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds: each runs every stage once, in a random order of its own; with 3 or "
        "more, increments are judged on the per-round differences (default: 1)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the rounds' stage order, to repeat a suite's order (default: a new one, "
        "printed and kept in comparison.json)",
    )
    parser.add_argument(
        "--no-floor",
        action="store_true",
        help="leave out the floor (a plain Kafka consume→produce loop), which otherwise "
        "runs first so that ingest's increment is measured over it (default: run it)",
    )
    add_run_arguments(parser)
    _handler(parser, "suite:run")


def _config(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "config",
        help="show the effective configuration and its sources",
        description="Configuration is layered: built-in defaults, then the TOML file given "
        "with --config, then command-line options. Unknown tables and keys are errors.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every setting, its value and its source")
    show.add_argument("--stage", help=f"as for run (default: {_R.stage})")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_run_arguments(show)
    _handler(show, "config:show")


def _capacity(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "capacity",
        help="find each stage's sustainable throughput (a search of constant-rate runs)",
        description="Constant-rate probes, each a complete run, growing geometrically from "
        "--from until one is not sustainable, then bisected to --precision. A probe is "
        "sustainable when its latency shows no rising trend, p50 stays under --max-p50, the "
        "job drains within --max-drain after the input stops, no output is missing, every "
        "output agrees with its inputs and the publisher offered the rate (if it could not "
        "while cores were idle, the publisher is the bottleneck and the result says so). "
        "Every probe counts once; the last few probe the current estimate, and the capacity "
        "is the rate passed half the time on a logistic curve fitted to all of them, with a "
        "95 % interval, beside the rate passed 90 % of the time. Writes "
        "results/<time>-capacity-<stage>-<id>/ with capacity.json, capacity.md, capacity.png "
        "and every probe's run directory. --budget or Ctrl-C stop the search and keep the "
        "bracket found so far. Probes measure for "
        f"{PROBE_DURATION_S:g} s after a {PROBE_LEAD_IN_S:g} s lead-in at half the rate and "
        f"at most {PROBE_WARMUP_MAX_S:g} s of warm-up at the rate unless --duration, "
        "--lead-in and --warmup-max say otherwise.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--stage", choices=SPARK_STAGES, help="the stage to measure")
    which.add_argument("--stages", help="comma-separated stages: one table of capacities")
    parser.add_argument(
        "--from",
        dest="start",
        type=float,
        default=500.0,
        metavar="RATE",
        help="first probe, msg/s (default: %(default)g)",
    )
    parser.add_argument(
        "--max",
        type=float,
        default=100_000.0,
        metavar="RATE",
        help="highest rate probed, msg/s (default: %(default)g)",
    )
    parser.add_argument(
        "--precision",
        type=float,
        default=0.10,
        help="relative width of the last bracket (default: %(default)g)",
    )
    parser.add_argument(
        "--growth",
        type=float,
        default=2.0,
        metavar="FACTOR",
        help="factor between probes while the rate grows (or falls, when the first probe "
        "fails), before the bracket is bisected (default: %(default)g)",
    )
    parser.add_argument(
        "--budget",
        metavar="TIME",
        help="stop a search after this long: 30m, 1h, 900 (default: none)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="independent searches per stage (default: %(default)s)",
    )
    parser.add_argument(
        "--max-p50",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="highest sustainable p50 (default: %(default)g s)",
    )
    parser.add_argument(
        "--max-drain",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="longest drain after the input ends (default: %(default)g s)",
    )
    parser.add_argument(
        "--max-cpu",
        type=float,
        metavar="PERCENT",
        help="also require mean engine CPU below this share of the machine, "
        "as the papers did with 80 (default: reported, not judged)",
    )
    add_run_arguments(
        parser,
        skip=("rate", "workload", "fault", "fault_at_s", "fault_down_s"),
        defaults={key: f"{value:g}" for key, value in PROBE_DEFAULTS.items()},
    )
    _handler(parser, "capacity:run")


COMMANDS = (_broker, _topics, _smoke, _publish, _pipeline, _evaluate, _compare, _report, _run,
            _suite, _capacity, _config, _history)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stagebench",
        description="Measure the latency each stage of a streaming pipeline adds, "
        "with every timestamp taken from one Kafka broker's clock (LogAppendTime).",
    )
    parser.add_argument("--version", action="version", version=f"stagebench {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(subparsers)
    return parser


def _configure_logging(verbose: int) -> None:
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)],
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("py4j", "kafka", "urllib3", "docker"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # librdkafka logs every reconnect attempt; stagebench reports the failures that matter
    logging.getLogger("rdkafka").setLevel(logging.DEBUG if verbose > 1 else logging.CRITICAL)


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        parser.print_help()
        return 2
    _configure_logging(args.verbose)
    # SIGTERM (timeout, CI runners, kill) and SIGHUP (a closed terminal) stop a command
    # the way Ctrl-C does: runs stop their job and publisher and keep their results
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    module, _, function = args.handler.partition(":")
    try:
        handler = getattr(importlib.import_module(f"stagebench.commands.{module}"), function)
        code = int(handler(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except StagebenchError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `stagebench … | head`: the reader has what it wanted
        # Python would report the pipe again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
