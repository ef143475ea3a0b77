"""``stagebench capacity``: each stage's sustainable throughput, found by a search of runs."""

import argparse
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines import registry
from engines.registry import NAMES, chosen
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import STAGES, stage
from stagebench.capacity.defaults import (
    PROBE_APPLICATION,
    PROBE_DEFAULTS,
    PROBE_DURATION_S,
    PROBE_EVALUATOR_DEFAULTS,
    PROBE_LEAD_IN_S,
    PROBE_WARMUP_MAX_S,
)
from stagebench.cli.options import run_overrides
from stagebench.cli.shared import Subparsers, add_run_arguments, say_what_stays_running
from stagebench.config.layers import ENGINE_TABLE, Settings, load
from stagebench.config.settings import RunConfig

if TYPE_CHECKING:
    from engines.base import Impl
    from stagebench.capacity.measure import Bounds
    from stagebench.capacity.probe import Criteria
    from stagebench.console import Console
    from stagebench.results.capacity import CapacityResult

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
    "results/<time>-capacity-<stage>-<id>/ with capacity.json, capacity.md, report.html "
    "(latency and the chance of passing against the rate, the deciding probes through "
    "time) and every probe's run directory; --engines searches each stage on several engines in "
    "turn. --budget or Ctrl-C stop the search and keep the "
    f"bracket found so far. Probes measure for {PROBE_DURATION_S:g} s after a "
    f"{PROBE_LEAD_IN_S:g} s lead-in at half the rate and at most {PROBE_WARMUP_MAX_S:g} s "
    "of warm-up at the rate unless --duration, --lead-in and --warmup-max say otherwise. "
    "Each probe starts a job of its own; --application shared runs a Spark search's as "
    "queries of one Spark application warmed up first at the first probe's rate (when that "
    "is sound: docs/capacity.md#a-probe)."
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


MEASURED = tuple(name for name in STAGES if stage(name).builds_on is not None)
"""The stages a search measures: the engines' stages; the floor is the reference every
ladder stands on, not a pipeline anyone sizes."""


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "capacity",
        help="find each stage's sustainable throughput (a search of constant-rate runs)",
        description=CAPACITY,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--stage",
        metavar="STAGE",
        help=f"the stage to measure: {', '.join(MEASURED)} (required, or --stages)",
    )
    which.add_argument(
        "--stages", help="comma-separated stages: one table of capacities (required, or --stage)"
    )
    parser.add_argument(
        "--engines",
        metavar="ENGINES",
        help=f"comma-separated engines ({', '.join(n for n in NAMES if n != 'floor')}), "
        "each also NAME@MODE for an execution mode of its own (spark@real-time): a search "
        "of every stage on each, one after another, and one table of capacities (default: "
        "--engine's, else the stage's: spark)",
    )
    for option, dest, kind, default, metavar, text in SEARCH:
        parser.add_argument(
            option, dest=dest, type=kind, default=default, metavar=metavar, help=text
        )
    parser.add_argument(
        "--tune",
        action="store_true",
        help="also find the engine's best setting for this question: search at the "
        "settings given, then challenge them with the throughput profile and each "
        "setting's other candidates (one probe each at the rate that failed; a search "
        "only for a candidate that sustains it), and report the best beside the first; "
        "docs/capacity.md#the-best-setting (default: off)",
    )
    parser.add_argument(
        "--tune-budget",
        metavar="TIME",
        default="2h",
        help="stop tuning a stage on an engine after this long: 30m, 2h (default: %(default)s)",
    )
    parser.add_argument(
        "--slo",
        action="append",
        default=[],
        metavar="PXX=BOUND",
        help="a latency target every sustainable probe must also meet over its measured "
        "period, such as p99=1s or p50=250ms; repeat it for several (default: none, the "
        "sustainable rate alone)",
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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from stagebench.capacity.measure import Bounds, one_search, write_set
    from stagebench.capacity.probe import PROBE_DRAIN_GRACE_S, Criteria, parse_slo
    from stagebench.capacity.search import check_settings, parse_budget
    from stagebench.capacity.table import format_table, headline
    from stagebench.console import Console
    from stagebench.history.index import record_or_warn
    from stagebench.report.capacity import label
    from stagebench.results.capacity import CapacityResult

    stages = stage_names(args)
    check_settings(args.start, args.max, args.precision, args.growth)
    try:
        budget_s = parse_budget(args.budget) if args.budget else None
    except ValueError as err:
        raise ConfigError(f"--budget: {err}") from err
    bounds = Bounds(args.start, args.max, args.precision, args.growth, budget_s)
    criteria = Criteria(max_p50_ms=args.max_p50 * 1000, max_drain_s=args.max_drain,
                        max_engine_cpu_pct=args.max_cpu,
                        slo_ms=dict(parse_slo(text) for text in args.slo))  # fmt: skip
    settings = load(args.config, run_overrides(args, workload="latency"))
    # a probe's own defaults, beneath the config file and the command line; its drain
    # is judged once it outlasts --max-drain, so a probe waits little longer for it
    drain = {"drain_timeout_s": criteria.max_drain_s + PROBE_DRAIN_GRACE_S}
    defaults: dict[str, Mapping[str, object]] = {
        "run": {**PROBE_DEFAULTS, "application": PROBE_APPLICATION, **drain},
        "evaluator": PROBE_EVALUATOR_DEFAULTS,
    }
    for section, values in defaults.items():
        for key, value in values.items():
            if key not in settings.values[section]:
                settings.values[section][key] = value
                settings.sources[section][key] = "capacity default"
    base = from_mapping(RunConfig, settings.section("run"), "run")
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    searches = planned(args, base, settings, stages)
    console = Console()
    results: list[CapacityResult] = []
    failed = interrupted = False
    if args.tune and args.repeat > 1:
        raise ConfigError("--tune runs its own searches: leave out --repeat")
    try:
        tune_budget_s = parse_budget(args.tune_budget)
    except ValueError as err:
        raise ConfigError(f"--tune-budget: {err}") from err
    for each, name, run_as in searches:
        impl = each.impl if each.impl in chosen(each.engine, name).impls(name) else "builtin"
        if args.tune:
            tuned, stopped = tuned_searches(name, impl, each, run_as, criteria, bounds, console,
                                            tune_budget_s)  # fmt: skip
            results += tuned
            failed |= any(r.stopped.startswith("error") for r in tuned)
            if stopped == "interrupted":
                interrupted = True
                break
            continue
        for attempt in range(args.repeat):
            result = one_search(name, impl, each, run_as, criteria, bounds, console)
            results.append(result)
            failed |= result.stopped.startswith("error") or result.stopped == "interrupted"
            print(f"capacity of {label(result)} ({impl}), search {attempt + 1}: "
                  f"{headline(result)}")  # fmt: skip
            print(f"results: {result.dir}")
            if warning := record_or_warn(Path(base.results_dir), Path(result.dir)):
                console.warn(warning)
            if result.stopped == "interrupted":
                break
        if results and results[-1].stopped == "interrupted":
            break
    if len(results) > 1:
        table = format_table(results)
        print()
        print(table)
        print(f"results: {write_set(Path(base.results_dir), results, table)}")
    say_what_stays_running(base.bootstrap)
    interrupted |= bool(results) and results[-1].stopped == "interrupted"
    return 130 if interrupted else (1 if failed else 0)


def stage_names(args: argparse.Namespace) -> list[str]:
    """The stages of ``--stage`` or ``--stages``; ConfigError for none, an unknown one, or
    the floor, which has no capacity of its own."""
    stages = [s.strip() for s in (args.stages or args.stage or "").split(",") if s.strip()]
    if not stages:
        raise ConfigError(f"--stages: name at least one stage ({', '.join(MEASURED)})")
    for name in stages:
        if name not in MEASURED:
            stage(name)  # an unknown stage: ConfigError naming the stages
            raise ConfigError(
                f"{name!r} has no capacity of its own: it is the Kafka round trip every "
                f"engine's stage pays (measure it with `stagebench run --stage {name}`); "
                f"a search measures {', '.join(MEASURED)}"
            )
    return stages


def planned(
    args: argparse.Namespace, base: RunConfig, settings: Settings, stages: list[str]
) -> list[tuple[RunConfig, str, Settings]]:
    """Every search, in order: (its run's base, its stage, its settings) for each engine
    of ``--engines`` and each stage; ConfigError for an engine that does not run one."""
    searches = []
    for entry in engine_names(args, base):
        engine, _, mode = entry.partition("@")
        # an execution mode of the engine's own (spark@real-time): its [pipeline] trigger
        run_as = (
            with_setting(settings, "pipeline", {"trigger": mode}, "--engines") if mode else settings
        )
        for name in stages:
            found = chosen(engine, name)  # ConfigError: that engine does not run it
            if mode:
                found.check(name, "builtin", mode)
            searches.append((replace(base, engine=engine), name, run_as))
    return searches


def tuned_searches(
    name: str,
    impl: "Impl",
    base: "RunConfig",
    settings: "Settings",
    criteria: "Criteria",
    bounds: "Bounds",
    console: "Console",
    budget_s: float,
) -> tuple[list["CapacityResult"], str]:
    """``--tune``: the search at the settings given and every search a candidate earned
    (:func:`stagebench.capacity.tune.tune`), the best last, with one line saying it; and
    why the tuning ended."""
    from stagebench.capacity.measure import challenge, one_search
    from stagebench.capacity.table import headline
    from stagebench.capacity.tune import score, tune
    from stagebench.config.profiles import knobs, profile
    from stagebench.history.index import record_or_warn

    engine = chosen(base.engine, name)
    found = knobs(engine.settings)
    table = f"{ENGINE_TABLE}.{engine.name}"
    start: dict[str, Any] = {}
    if found and engine.settings is not None:
        given: object = from_mapping(engine.settings, settings.section(table), table)
        start = {key: getattr(given, key) for key in found}
    results: list[CapacityResult] = []

    def named(setting: dict[str, Any]) -> dict[str, Any]:
        kind = next((p for p in ("latency", "throughput") if profile(found, p) == setting),
                    "tuned")  # fmt: skip
        return {"profile": kind, "values": setting}

    def search(setting: dict[str, Any], from_rate: float | None) -> "CapacityResult":
        at = replace(bounds, start=from_rate or bounds.start)
        result = one_search(name, impl, base, with_setting(settings, table, setting),
                            criteria, at, console, setting=named(setting))  # fmt: skip
        results.append(result)
        print(f"capacity of {engine.name}:{name} at {_shown(setting)}: "
              f"{headline(result)}")  # fmt: skip
        print(f"results: {result.dir}")
        if warning := record_or_warn(Path(base.results_dir), Path(result.dir)):
            console.warn(warning)
        return result

    def challenged(setting: dict[str, Any], rate: float) -> bool:
        console.step(f"tuning {engine.name}:{name}: does {_shown(setting)} sustain "
                     f"{rate:,.0f} msg/s?")  # fmt: skip
        return challenge(name, impl, base, with_setting(settings, table, setting), criteria,
                         rate, console).sustainable  # fmt: skip

    if not found:
        console.warn(f"{engine.title} has no settings to tune: one search at its own")
        alone = search({}, None)
        return [alone], alone.stopped
    deadline = time.monotonic() + budget_s
    tuning = tune(found, start, search, challenged, lambda: deadline - time.monotonic())
    print(
        f"best setting of {engine.name}:{name}: {_shown(tuning.best_setting)}, "
        f"{score(tuning.best):,.0f} msg/s against {score(tuning.start):,.0f} at "
        f"{_shown(start)}; {len(tuning.tried)} candidates challenged, tuning ended: "
        f"{tuning.stopped}"
    )
    if tuning.best_setting != start:
        chosen_set = " ".join(f"--set {table}.{k}={v}" for k, v in tuning.best_setting.items())
        print(f"run or suite at it: {chosen_set}")
    return [r for r in results if r is not tuning.best] + [tuning.best], tuning.stopped


def with_setting(
    settings: Settings, table: str, setting: dict[str, Any], source: str = "capacity --tune"
) -> Settings:
    """``settings`` with ``setting`` in the table ``table``, from ``source``."""
    values = {section: dict(v) for section, v in settings.values.items()}
    sources = {section: dict(v) for section, v in settings.sources.items()}
    values.setdefault(table, {}).update(setting)
    sources.setdefault(table, {}).update(dict.fromkeys(setting, source))
    return Settings(values, sources)


def _shown(setting: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in setting.items()) or "its own settings"


def engine_names(args: argparse.Namespace, base: RunConfig) -> list[str]:
    """The engines of ``--engines``, each NAME or NAME@MODE, an execution mode of its own
    (``spark@real-time``); ConfigError for an unknown one, or with ``--engine``. Else
    ``--engine``'s ("": the stage's own)."""
    if not args.engines:
        return [base.engine]
    if args.engine:
        raise ConfigError("give --engine or --engines, not both")
    names = [name.strip() for name in args.engines.split(",") if name.strip()]
    for name in names:
        engine, _, mode = name.partition("@")
        if engine not in NAMES or engine == "floor":
            raise ConfigError(
                f"--engines: no engine {engine!r} (engines: "
                f"{', '.join(n for n in NAMES if n != 'floor')})"
            )
        found = registry.engine(engine)
        modes = {m for stage_name in found.stages for m in found.triggers(stage_name)}
        if mode and mode not in modes:
            raise ConfigError(
                f"--engines: {found.title} has no {mode} mode (it has: {', '.join(sorted(modes))})"
            )
    if not names or len(set(names)) < len(names):
        raise ConfigError("--engines: name each engine once")
    return names
