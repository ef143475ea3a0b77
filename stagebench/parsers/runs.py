"""The parsers of the commands that run the whole chain: run, suite, capacity, and config
show, which prints the settings they would use."""

from engines.registry import stages_of
from ground.stages import MAIN_LINE, STAGES
from stagebench.options import APPLICATION_FIELDS
from stagebench.parsers.fields import add_field
from stagebench.parsers.shared import Subparsers, add_run_arguments, flag, handler
from stagebench.probe_settings import (
    PROBE_APPLICATION,
    PROBE_DEFAULTS,
    PROBE_DURATION_S,
    PROBE_LEAD_IN_S,
    PROBE_WARMUP_MAX_S,
)
from stagebench.settings import RunConfig


def run(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "run",
        help="one complete benchmark run of one stage",
        description="Fresh topics → Spark job up to STAGE → publisher → drain → evaluation. "
        "Prints the latency table and writes everything to results/<time>-<stage>-<id>/. "
        "Ctrl-C stops everything cleanly and keeps what was collected.",
    )
    add_field(parser, RunConfig, "stage")
    add_run_arguments(parser, skip=APPLICATION_FIELDS)
    handler(parser, "run:run")


def suite(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "suite",
        help="run the stage ladder and print the increment table",
        description="Run each stage in turn with identical settings (but for the "
        "implementation or trigger an entry of --stages names), then compare them: "
        "p50/p95/p99 per stage and the increment each adds over the stage it builds on. "
        "Writes results/<time>-suite-<id>/comparison.{json,md} and report.html.",
    )
    parser.add_argument(
        "--stages",
        default=",".join(MAIN_LINE),
        help="comma-separated stages (any order: each round draws its own), each "
        "STAGE[/IMPL][@real-time]: /custom runs a window's custom implementation beside "
        "others, @real-time a stage in Spark's real-time mode beside the others' trigger, "
        "e.g. tumbling,tumbling/custom,tumbling-union,tumbling-union@real-time "
        f"(stages: {', '.join(STAGES)}; default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds: each runs every stage once, in a random order of its own (in a shared "
        "application the first round's is fixed: window stages first, the floor next, the "
        "stateless Spark stages last); with 3 or more, increments are judged on the "
        "per-round differences (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the rounds' random stage order, to repeat a suite's order (default: a "
        "new one, printed and kept in comparison.json)",
    )
    flag(
        parser,
        "--no-floor",
        "leave out the floor (a plain Kafka consume→produce loop), which otherwise "
        "runs first so that ingest's increment is measured over it (default: run it)",
    )
    add_run_arguments(parser)
    handler(parser, "suite:run")


CAPACITY = (
    "Constant-rate probes, each a complete run, growing geometrically from "
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
    f"bracket found so far. Probes measure for {PROBE_DURATION_S:g} s after a "
    f"{PROBE_LEAD_IN_S:g} s lead-in at half the rate and at most {PROBE_WARMUP_MAX_S:g} s "
    "of warm-up at the rate unless --duration, --lead-in and --warmup-max say otherwise. "
    "Each probe starts a Spark job of its own; --application shared runs them as queries "
    "of one Spark application warmed up first at the first probe's rate (near capacity "
    "its verdicts and a warmed-up job's have disagreed both ways: docs/capacity.md)."
)
# (option, dest, type, default, metavar, help) of the search and its verdicts
SEARCH = [
    ("--from", "start", float, 500.0, "RATE", "first probe, msg/s (default: %(default)g)"),
    ("--max", "max", float, 100_000.0, "RATE", "highest rate probed, msg/s (default: %(default)g)"),
    ("--precision", "precision", float, 0.10, None,
     "relative width of the last bracket (default: %(default)g)"),
    ("--growth", "growth", float, 2.0, "FACTOR", "factor between probes while the rate grows "
     "(or falls, when the first probe fails), before the bracket is bisected "
     "(default: %(default)g)"),
    ("--budget", "budget", None, None, "TIME",
     "stop a search after this long: 30m, 1h, 900 (default: none)"),
    ("--repeat", "repeat", int, 1, None, "independent searches per stage (default: %(default)s)"),
    ("--max-p50", "max_p50", float, 10.0, "SECONDS",
     "highest sustainable p50 (default: %(default)g s)"),
    ("--max-drain", "max_drain", float, 10.0, "SECONDS",
     "longest drain after the input ends (default: %(default)g s)"),
    ("--max-cpu", "max_cpu", float, None, "PERCENT", "also require mean engine CPU below this "
     "share of the machine, as the papers did with 80 (default: reported, not judged)"),
]  # fmt: skip


def capacity(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "capacity",
        help="find each stage's sustainable throughput (a search of constant-rate runs)",
        description=CAPACITY,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--stage", choices=stages_of("spark"), help="the stage to measure")
    which.add_argument("--stages", help="comma-separated stages: one table of capacities")
    for option, dest, kind, default, metavar, text in SEARCH:
        parser.add_argument(
            option, dest=dest, type=kind, default=default, metavar=metavar, help=text
        )
    add_run_arguments(
        parser,
        # a probe's rate is the search's; its drain timeout follows --max-drain
        skip=(
            "rate",
            "workload",
            "fault",
            "fault_at_s",
            "fault_down_s",
            "drain_timeout_s",
            # a probe settles over --settle-window, in a shared application too
            "warm_settle_window_s",
        ),
        shown={
            **{key: f"{value:g}" for key, value in PROBE_DEFAULTS.items()},
            "application": PROBE_APPLICATION,
        },
    )
    handler(parser, "capacity:run")


def config(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "config",
        help="show the effective configuration and its sources",
        description="Configuration is layered: built-in defaults, then the TOML file given "
        "with --config, then command-line options. Unknown tables and keys are errors.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every setting, its value and its source")
    show.add_argument("--stage", help=f"as for run (default: {RunConfig().stage})")
    flag(show, "--json", "print JSON instead of a table (default: a table)")
    add_run_arguments(show)
    handler(show, "config:show")
