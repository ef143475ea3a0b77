"""What differs between the settings of runs besides stage and implementation.

A comparison of runs means something only when the runs were made alike: the
cumulative stage table (:mod:`evaluator.comparison.compare`) refuses runs that differ unless a
mixed comparison is allowed, an A/B comparison (:mod:`evaluator.comparison.ab`) lists what differs
between its sides, and the history of runs (``stagebench history``) filters on these
settings. Light on purpose (json only): the history reads it without loading numpy.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluator.model.result import Summary

# What two runs of one comparison must share besides stage, engine and implementation:
# these keys of summary.json's ``run`` section, and every key of these ``config``
# sections and of the engines' tables (``engine.<name>``) but the ones below.
RUN_KEYS = ("rate", "workload", "duration_s", "bootstrap")
CONFIG_SECTIONS = ("run", "publisher", "pipeline", "evaluator")
NOT_COMPARED = {
    # per run by design, or a copy of a value compared already (run.rate,
    # run.bootstrap — the Kafka actually used —, [evaluator] warmup_s; an older run's
    # [pipeline] master, a copy of its [run] master)
    # a suite's shared Spark application: each run records in its warm-up whether it
    # ran there, and its figures are those of a job of its own (docs/method.md)
    "run": {"stage", "engine", "impl", "results_dir", "rate", "workload", "duration_s", "bootstrap",
            "warmup_s", "application", "app_warmup_s", "app_warmup_rate",
            "warm_settle_window_s"},
    "publisher": {"speed_topic", "flow_topic", "rate", "workload", "duration_s"},
    "pipeline": {"stage", "engine", "impl", "run_id", "output_topic", "speed_topic", "flow_topic",
                 "checkpoint_dir", "bootstrap", "master"},
    # settings older runs hold and the evaluator no longer has: no number depended on them
    "evaluator": {"plots", "log_scale", "engine"},
}  # fmt: skip


ENGINE_TABLE = "engine."
"""The prefix of an engine's table in config.json (``engine.spark``): its keys are
compared among the runs of that engine only."""
BEFORE_ENGINE_TABLES = ("engine.spark", {
    "run": ("master",),
    "pipeline": ("trigger_interval_ms", "real_time_checkpoint", "shuffle_partitions",
                 "max_offsets_per_trigger", "jit_threshold_scaling", "garbage_collector",
                 "file_permissions", "spark_conf"),
})  # fmt: skip
"""Runs made before engines had tables of their own kept these settings, the only
engine's, in ``[run]`` and ``[pipeline]``: they compare as that engine's table (a floor
run's are left out: it recorded them, and ran none)."""

ROW_SETTING = "[pipeline] trigger"
"""Told apart by the rows themselves: a real-time run's implementation reads
``builtin@real-time`` (:func:`evaluator.comparison.rows.variant`), so a table of both
modes is no mixed comparison."""

_ABSENT = object()


def differences(summaries: Mapping[str, "Summary"]) -> list[str]:
    """What differs between runs besides stage and implementation, one line per setting.

    ``summaries`` maps each run directory to its summary. Compared: the
    ``run`` section's rate, workload, duration_s and bootstrap (the Kafka used),
    and every key of the ``config`` sections run, publisher, pipeline and
    evaluator and the engine's own table (nested tables key by key; an engine's keys
    among that engine's runs only) except those a run sets for itself
    (stage, impl, run id, topics, checkpoint and results directories), copies
    of a value compared already, and the evaluator settings of older runs that it no
    longer has (:data:`NOT_COMPARED`). A line reads
    ``rate: 400 in 3 runs, 800 in 1 run (20261101T…-join-ab12)``: each value
    with its number of runs, naming the runs of all values but the most common.
    The trigger is left out (:data:`ROW_SETTING`).
    """
    settings = {
        run_dir: {k: v for k, v in compared_settings(summary).items() if k != ROW_SETTING}
        for run_dir, summary in summaries.items()
    }
    names: dict[str, None] = {}
    for values in settings.values():
        names.update(dict.fromkeys(values))
    lines = []
    for name in names:
        groups: dict[str, list[str]] = {}
        table = name.partition("] ")[0] + "] " if name.startswith(f"[{ENGINE_TABLE}") else None
        for run_dir, values in settings.items():
            if table is not None and not any(key.startswith(table) for key in values):
                continue  # a run of another engine
            groups.setdefault(shown(values.get(name, _ABSENT)), []).append(run_dir)
        if len(groups) > 1:
            lines.append(f"{name}: {_describe(groups)}")
    return lines


def compared_settings(summary: "Summary") -> dict[str, Any]:
    """The compared settings of one summary: name → value as stored ("rate",
    "[engine.spark] trigger_interval_ms"; nested tables key by key)."""
    run: Mapping[str, Any] = summary.run
    out = {key: run[key] for key in RUN_KEYS if key in run}
    config = summary.config
    tables = [name for name in config if name.startswith(ENGINE_TABLE)]
    moved = {} if tables else _before_engine_tables(config, run.get("stage") == "floor")
    for section in (*CONFIG_SECTIONS, *tables):
        values = config.get(section) or {}
        for key, value in values.items():
            if key in NOT_COMPARED.get(section, ()):
                continue
            to = moved.get((section, key), section)
            if to is not None:
                out.update(_flatten(f"[{to}] {key}", value))
    return out


def _before_engine_tables(
    config: Mapping[str, Any], floor: bool
) -> dict[tuple[str, str], str | None]:
    """(section, key) → the engine's table, for a run made before engines had tables;
    None for a run of the floor, which has no such settings (it recorded Spark's)."""
    table, keys = BEFORE_ENGINE_TABLES
    return {
        (section, key): None if floor else table
        for section, names in keys.items()
        for key in names
        if key in (config.get(section) or {})
    }


def _flatten(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(f"{name}.{key}", sub))
        return out
    return {name: value}


def shown(value: Any) -> str:
    """A setting's value as a reader sees it; equal values read the same (400 == 400.0)."""
    if value is _ABSENT:
        return "absent"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _describe(groups: dict[str, list[str]]) -> str:
    """Values with their number of runs, "A in 3 runs, B in 1 run (name)": the most
    common first, the runs of every other value named (of every value when no
    single one is most common)."""
    ordered = sorted(groups, key=lambda v: -len(groups[v]))  # stable: first seen first on ties
    top = len(groups[ordered[0]])
    unique_top = sum(1 for v in ordered if len(groups[v]) == top) == 1
    parts = []
    for i, value in enumerate(ordered):
        dirs = groups[value]
        part = f"{value} in {len(dirs)} run{'s' if len(dirs) > 1 else ''}"
        if i > 0 or not unique_top:
            part += f" ({', '.join(Path(d).name for d in dirs)})"
        parts.append(part)
    return ", ".join(parts)
