"""The option tables that both the parser and the command handlers read.

:mod:`stagebench.cli` turns each entry into an argparse option; the handlers in
:mod:`stagebench.commands` turn the parsed values back into configuration with the same
entries. Kept apart from the parser so that no handler imports :mod:`stagebench.cli`
(import-linter checks it); as light as the parser, since ``--help`` builds them.
"""

import argparse
from typing import Any

from evaluator.config import SETTLE_WINDOWS
from pipelines.config import PipelineConfig
from stagebench.faults import FAULTS
from stagebench.settings import RunConfig


def _warmup(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected auto or seconds, got {text!r}") from err


_R = RunConfig()
# (option, [run] key, type, help); no argparse default, so the config file's value or
# RunConfig's stays unless the option is given
RUN_OPTIONS: list[tuple[str, str, Any, str]] = [
    ("--rate", "rate", float, f"messages/s over both input topics (default: {_R.rate:g})"),
    ("--duration", "duration_s", float, f"measured seconds per run (default: {_R.duration_s:g})"),
    ("--warmup", "warmup_s", _warmup, "warm-up before the measured period, whose outputs are "
     "left out: seconds, or auto: until the per-second median latency changes by less "
     f"than 10 %% in each of {SETTLE_WINDOWS} windows of {_R.settle_window_s:g} s in a row "
     f"(default: {_R.warmup_s})"),
    ("--warmup-max", "warmup_max_s", float, f"longest auto warm-up, seconds "
     f"(default: {_R.warmup_max_s:g})"),
    ("--warmup-min", "warmup_min_s", float, "shortest auto warm-up, seconds: the JIT can "
     f"plateau before its next drop (default: {_R.warmup_min_s:g})"),
    ("--lead-in", "lead_in_s", float, "seconds published at half the rate before the warm-up, "
     "so the job warms up without a start-up backlog; latency workload only "
     f"(default: {_R.lead_in_s:g})"),
    ("--tail", "tail_s", float, f"seconds published after the measured period "
     f"(default: {_R.tail_s:g})"),
    ("--partitions", "partitions", int, f"partitions per topic (default: {_R.partitions})"),
    ("--leader", "leader", int, "broker id that leads every partition of the run's topics "
     "(default: the lowest)"),
    ("--replication", "replication", int, "replicas per partition of the run's topics, "
     "min.insync.replicas one less (default: the broker count, at most 3)"),
    ("--fault", "fault", str, f"inject a fault into the measured period: {', '.join(FAULTS)} "
     "(docs/method.md#faults; default: none)"),
    ("--fault-at", "fault_at_s", float, "seconds into the measured period the fault comes; "
     f"the period goes on for --duration minus this after it (default: {_R.fault_at_s:g})"),
    ("--fault-down", "fault_down_s", float, "seconds a broker fault keeps the broker down "
     f"(default: {_R.fault_down_s:g})"),
    ("--master", "master", str, f"Spark master, e.g. spark://host:7077 (default: {_R.master})"),
    ("--checkpoint-root", "checkpoint_root", str,
     "Spark checkpoint location every cluster node reaches (default: the run directory)"),
    ("--results", "results_dir", str,
     f"directory for run directories (default: {_R.results_dir})"),
]  # fmt: skip


def run_overrides(args: argparse.Namespace, **extra: Any) -> dict[str, dict[str, Any]]:
    """The command line's ``[run]`` values (only those given)."""
    keys = [key for _, key, _, _ in RUN_OPTIONS] + ["impl", "workload", "bootstrap"]
    values = {key: getattr(args, key, None) for key in keys} | extra
    return {"run": {key: value for key, value in values.items() if value is not None}}


_P = PipelineConfig.__dataclass_fields__
# (option, PipelineConfig field, type, help) of ``stagebench pipeline``
PIPELINE_TUNING: list[tuple[str, str, Any, str]] = [
    ("--trigger", "trigger", str, "processing-time or real-time (Spark real-time mode; "
     "ingest and parse only) (default: processing-time)"),
    ("--real-time-checkpoint", "real_time_checkpoint", str,
     "real-time mode checkpoint interval, a Spark interval such as '10 seconds' "
     "(minimum 5 s; not a latency) (default: 5 minutes)"),
    ("--trigger-interval-ms", "trigger_interval_ms", int,
     "processing-time trigger interval (default: 0, next batch at once)"),
    ("--shuffle-partitions", "shuffle_partitions", int,
     "spark.sql.shuffle.partitions (default: number of cores)"),
    ("--watermark-delay-ms", "watermark_delay_ms", int,
     f"allowed lateness of the observation time (default: {_P['watermark_delay_ms'].default})"),
    ("--join-range-ms", "join_range_ms", int,
     f"event-time range of the join condition (default: {_P['join_range_ms'].default})"),
    ("--max-offsets-per-trigger", "max_offsets_per_trigger", int,
     "Kafka source maxOffsetsPerTrigger (default: unlimited)"),
    ("--starting-offsets", "starting_offsets", str, "earliest or latest (default: earliest)"),
    ("--window-length-ms", "window_length_ms", int,
     f"sliding window length (default: {_P['window_length_ms'].default})"),
    ("--window-slide-ms", "window_slide_ms", int,
     f"sliding window slide (default: {_P['window_slide_ms'].default})"),
    ("--lookback-short-ms", "lookback_short_ms", int,
     f"short-term change lookback (default: {_P['lookback_short_ms'].default})"),
    ("--lookback-long-ms", "lookback_long_ms", int,
     f"long-term change lookback (default: {_P['lookback_long_ms'].default})"),
]  # fmt: skip
