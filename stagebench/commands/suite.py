"""``stagebench suite``: the stage ladder with identical settings, in rounds, and the increments."""

import sys
from dataclasses import replace
from pathlib import Path

from engines.config import TRIGGERS
from engines.registry import chosen, engine_for
from evaluator.comparison_table import format_table
from ground.config import from_mapping
from ground.errors import ConfigError
from ground.stages import STAGES
from stagebench.console import Console
from stagebench.faults import ENGINE_FAULTS
from stagebench.history_index import record_or_warn
from stagebench.options import run_overrides
from stagebench.run_config import validate
from stagebench.settings import RunConfig, load
from stagebench.suite import run_suite, with_trigger
from stagebench.suite_order import split_trigger


def entries(text: str, default_impl: str, engine_name: str = "") -> list[tuple[str, str]]:
    """``--stages`` as the suite's (stage[@trigger], impl) pairs: each entry is
    ``STAGE[/IMPL][@TRIGGER]``, e.g. ``tumbling/custom`` or ``tumbling-union@real-time``,
    run by ``engine_name`` (``--engine``; "": each stage's default). Without ``/IMPL`` a
    stage takes ``default_impl`` (``--impl``) where its engine has it, else the engine's
    own operators. ConfigError naming the entry that cannot run."""
    out = []
    for entry in (s.strip() for s in text.split(",") if s.strip()):
        head, trigger = split_trigger(entry)
        name, _, impl = head.partition("/")
        if entry.endswith("@"):
            raise ConfigError(f"{entry}: no trigger after @ (triggers: {', '.join(TRIGGERS)})")
        if name not in STAGES:
            raise ConfigError(f"unknown stage(s) [{name!r}] (stages: {', '.join(STAGES)})")
        if trigger is not None and trigger not in TRIGGERS:
            raise ConfigError(
                f"{entry}: unknown trigger {trigger!r} after @ (triggers: {', '.join(TRIGGERS)})"
            )
        engine = chosen(engine_name, name)
        if trigger is not None and trigger not in engine.triggers(name):
            raise ConfigError(f"{entry}: {engine.title}'s {trigger} mode cannot run stage {name!r}")
        impl = impl or (default_impl if default_impl in engine.impls(name) else "builtin")
        engine.check(name, impl)
        out.append((name + (f"@{trigger}" if trigger else ""), impl))
    if not out:
        raise ConfigError(f"no stage given (stages: {', '.join(STAGES)})")
    return out


def run(args) -> int:
    if args.repeat < 1:
        raise ConfigError("--repeat must be at least 1")
    settings = load(args.config, run_overrides(args))
    base = from_mapping(RunConfig, settings.section("run"), "run")
    stages_impl = entries(args.stages, base.impl, base.engine)
    if not args.no_floor and "floor" not in (s for s, _ in stages_impl):
        if base.fault in ENGINE_FAULTS and base.fault not in engine_for("floor").faults:
            print(f"the floor is left out: it cannot take {base.fault}", file=sys.stderr)
        else:  # so that ingest's increment is measured over Kafka's own; no Spark job,
            # so never in real-time mode, whatever [pipeline] trigger the others take
            real_time = settings.section("pipeline").get("trigger") == "real-time"
            stages_impl.insert(0, ("floor@processing-time" if real_time else "floor", "builtin"))
    for entry, impl in stages_impl:  # every run's settings, before the first run starts
        name, trigger = split_trigger(entry)
        validate(replace(base, stage=name, impl=impl), with_trigger(settings, trigger))
    suite = run_suite(
        stages_impl, args.repeat, replace(base, impl="builtin"), settings, Console(), args.seed
    )
    print(format_table(suite.comparison))
    print(f"\norder (seed {suite.order.seed}):")
    print("\n".join(f"  {line}" for line in suite.order.lines()))
    print(f"\nreport: {suite.page.describe()}")
    print(f"\nsuite results: {suite.suite_dir}")
    if warning := record_or_warn(Path(base.results_dir), suite.suite_dir):
        print(f"WARNING: {warning}", file=sys.stderr)
    for run_dir in suite.incomplete:
        print(
            f"WARNING: {run_dir} has missing outputs or is not trusted (see its summary.json)",
            file=sys.stderr,
        )
    for failed in suite.failed:
        print(
            f"WARNING: round {failed['round']}, stage {failed['stage']} ({failed['impl']}) "
            f"failed: {failed['error']}",
            file=sys.stderr,
        )
    return 1 if suite.incomplete or suite.failed else 0
