"""What one evaluation found, as typed, frozen records: a run's :class:`Summary` and the records
it holds.

:func:`evaluator.summary.build_summary` turns :mod:`evaluator.measure`'s
:class:`~evaluator.measure.Measurement` into the :class:`Summary` whose :meth:`Summary.as_dict`
is summary.json. Each field's ``metadata["doc"]`` says what its key holds:
docs/results-schema.md is generated from them (:mod:`evaluator.files.result_schema`). A field
marked ``omit_none`` has no key when it is None; a ``flatten`` record's keys join its parent's
(none when it is None): the conventions of :mod:`evaluator.model.record`."""

from dataclasses import dataclass, field
from typing import Any

from evaluator.latencies.latency import Period
from evaluator.model.record import Section, Stats, as_dict, key_doc
from evaluator.model.run_info import RunMetadata, RunSection
from evaluator.statistics.stats import STAT_KEYS


@dataclass(frozen=True)
class Records:
    """Record counts of the measured period, as evaluator.outputs.completeness and
    evaluator.outputs.checks count them; None (null) where not applicable."""

    outputs: int = field(
        metadata=key_doc("valid outputs whose latest input lies in the measured period")
    )
    duplicates: int = field(metadata=key_doc("outputs beyond the first of their identity"))
    expected: int | None = field(
        metadata=key_doc("outputs the inputs say must exist (null: no input read)")
    )
    missing: int | None = field(
        metadata=key_doc("expected outputs with no output of their identity")
    )
    unexpected: int | None = field(
        metadata=key_doc("outputs no input explains (they have no latency)")
    )
    partial_windows: int | None = field(
        metadata=key_doc(
            "windowed stages: expected location-seconds with fewer lanes than the location has"
        )
    )
    partial_window_outputs: int | None = field(
        metadata=key_doc(
            "tumbling, tumbling-union: outputs whose own lanes_seen is below their num_lanes"
        )
    )
    input_ts_mismatch: int | None = field(
        metadata=key_doc(
            "outputs carrying an input_ts_latest that is not their latest input's broker timestamp"
        )
    )
    input_ts_earliest_mismatch: int | None = field(
        metadata=key_doc("outputs carrying an input_ts_earliest that is not their earliest input's")
    )
    input_count_mismatch: int | None = field(
        metadata=key_doc("outputs carrying an input_count that is not the number of their inputs")
    )
    wrong_values: int | None = field(
        metadata=key_doc("outputs whose values differ from those of their inputs")
    )
    negative: int = field(
        metadata=key_doc("negative latencies (impossible on one clock: a measurement error)")
    )
    negative_earliest: int = field(
        metadata=key_doc("negative latencies against the earliest input")
    )
    malformed_inputs: int | None = field(
        metadata=key_doc("malformed inputs (ground.malformed) over the whole run; null for ingest")
    )
    malformed_inputs_by_kind: dict[str, int] | None = field(
        metadata=key_doc(
            "the malformed inputs per kind: not_json, truncated, missing_field, wrong_type, "
            "unknown_field, empty_value, oversized, non_utf8, out_of_range (null for ingest)"
        )
    )
    malformed_outputs: int = field(
        metadata=key_doc(
            "outputs lacking a field evaluator.topics.output_fields.required_fields requires"
        )
    )
    outside_window: int = field(
        metadata=key_doc("valid outputs whose latest input lies outside the period")
    )
    inputs: int = field(metadata=key_doc("input records read"))
    inputs_measured: int = field(
        metadata=key_doc("input records whose broker timestamp lies in the period")
    )
    outputs_total: int = field(metadata=key_doc("output records read, valid or not"))
    unreferenced_inputs: int | None = field(
        default=None,
        metadata=key_doc(
            "a user's job (stage job): inputs of the measured period no output names, a "
            "filter's drops or outputs the job never wrote (its expected and missing are "
            "null: stagebench cannot tell which outputs must exist); absent for the ladder",
            omit_none=True,
        ),
    )


@dataclass(frozen=True)
class Backlog:
    """A job started behind a backlog (single burst): its ``job_started_ms`` mark."""

    job_started_ms: int = field(metadata=key_doc("the broker-clock mark of the job's query start"))
    time_to_first_output_ms: int | None = field(
        metadata=key_doc("its first output's broker time after it")
    )
    catch_up: Section = field(
        metadata=key_doc(
            "live_p50_ms, caught_up_s, caught_up: when its per-second p50 reached the live "
            "p50 (evaluator.latencies.catchup.catch_up)"
        )
    )


@dataclass(frozen=True)
class Throughput:
    """Records per second of the measured period, each by its own broker timestamp."""

    input_mps: float | None = field(
        metadata=key_doc("inputs per second (null when the period is empty)")
    )
    output_mps: float | None = field(
        metadata=key_doc("valid outputs per second (null when the period is empty)")
    )
    seconds: float = field(metadata=key_doc("the measured period's length"))
    peak_output_mps: int | None = field(
        metadata=key_doc(
            "the most valid outputs appended in one broker second of the run (null: none)"
        )
    )
    first_output_delay_ms: int | None = field(
        metadata=key_doc(
            "first valid output − first input (single burst: with the backlog); null without "
            "inputs or outputs, or when the topics were read from a later time"
        )
    )
    drain_ms: int | None = field(
        metadata=key_doc(
            "last valid output − last input: how long the job still wrote (a capacity probe "
            "must drain within 10 s); null without inputs or outputs"
        )
    )
    backlog: Backlog | None = field(
        default=None, metadata=key_doc("a job started behind a backlog", flatten=True)
    )


@dataclass(frozen=True)
class MeasuredPeriod:
    """The run's period and the measured part of it, broker time (epoch ms): outputs
    and expected outputs are both selected by their latest input's timestamp."""

    start_ms: int = field(metadata=key_doc("the run's start (its mark, else its first input)"))
    end_ms: int = field(metadata=key_doc("the run's end (its mark, else its last input)"))
    measured_from_ms: int = field(metadata=key_doc("start + warm-up"))
    measured_to_ms: int = field(metadata=key_doc("end − end cut"))
    warmup_ms: int = field(metadata=key_doc("the warm-up left out"))
    end_cut_ms: int = field(metadata=key_doc("the end cut left out"))

    @classmethod
    def of(cls, period: Period) -> "MeasuredPeriod":
        return cls(
            start_ms=period.start,
            end_ms=period.end,
            measured_from_ms=period.lo,
            measured_to_ms=period.hi,
            warmup_ms=period.lo - period.start,
            end_cut_ms=period.end - period.hi,
        )


@dataclass(frozen=True)
class Evaluation:
    """How the run was evaluated."""

    engine: str = field(
        metadata=key_doc("pandas (spark in summaries of the evaluator's former Spark engine)")
    )
    percentile_method: str = field(metadata=key_doc("how the percentiles were computed"))
    from_ms: int | None = field(
        metadata=key_doc(
            "the topics were read from this broker time on (capacity probes of ingest and "
            "parse, evaluator.run_topics.read_from_ms), null from their beginning"
        )
    )
    outputs_of_unread_inputs: int | None = field(
        metadata=key_doc(
            "outputs left out because their inputs came before from_ms",
            omit_none=True,
        )
    )
    seconds: float | None = field(
        default=None, metadata=key_doc("how long the evaluation took", omit_none=True)
    )


@dataclass(frozen=True)
class Summary:
    """A run's summary.json (:meth:`as_dict`), schema version ``schema_version``."""

    schema_version: int = field(
        metadata=key_doc(
            "raised whenever a key changes its meaning or disappears (evaluator.model.summary_file)"
        )
    )
    run: RunSection = field(
        metadata=key_doc(
            "id, stage, engine (the stream engine that ran it: floor, spark, flink; null for a run "
            "made before engines were named), impl, workload, rate, duration_s, bootstrap, "
            "input_topics, output_topic, start_ms, end_ms"
        )
    )
    versions: dict[str, str | None] = field(
        metadata=key_doc(
            "the run's (stagebench, stagebench_commit: the git commit stagebench ran from, "
            '"-dirty" with changes, null outside a git work tree; python, each engine\'s '
            "(engines.base.Engine.versions; the Spark engine's: its Spark release and "
            "spark_kafka_connector), kafka_broker, java, …) and the evaluator's libraries"
        )
    )
    config: Section = field(
        metadata=key_doc(
            "the run's configuration verbatim (run, publisher, pipeline, sources) plus evaluator"
        )
    )
    metadata: RunMetadata = field(
        metadata=key_doc(
            "the run's, verbatim: machine, started_at, ended_at, publisher, resources (mean/max "
            "CPU %, RSS, heap and garbage-collection ms per second per process), leaders, "
            "marks_ms, warmup, faults[] (kind, start_ms, end_ms, seconds, executor_pid: a "
            "fault's window in broker time)"
        )
    )
    period: MeasuredPeriod = field(metadata=key_doc("the measured period"))
    latency_ms: Stats = field(
        metadata=key_doc(
            "output timestamp − latest input's timestamp, read from the input topics (ms), over "
            "the measured outputs an input explains; exact numpy linear percentiles; p99_9 is "
            "the 99.9th percentile, p99_99 the 99.99th",
            keys=STAT_KEYS,
        )
    )
    latency_earliest_ms: Stats = field(
        metadata=key_doc("the same against the earliest input", keys=STAT_KEYS)
    )
    latency_intended: Section | None = field(
        metadata=key_doc(
            "latency_ms, send_delay_ms (count, mean, min, p50 … max), same_clock: the latency "
            "from the intended send time, output timestamp − the scheduled_ts of its latest "
            "input (the broker-clock latency plus that input's send delay, the largest of "
            "the inputs appended in its millisecond), and the send delay (broker append − "
            "scheduled_ts) of the measured period's inputs: the wait a publisher behind its "
            "schedule hides from the broker-clock latency (evaluator.latencies.intended); "
            "same_clock false: the broker runs on another host, so the figures mix two clocks; "
            "null when no input was read",
            omit_none=True,
        )
    )
    records: Records = field(metadata=key_doc("completeness and checks of the measured period"))
    missing: Section | None = field(
        metadata=key_doc(
            "count, spans, spans_total, examples: where the missing outputs' inputs are: "
            "stretches of broker seconds [first_s, last_s, count] and the first five by identity; "
            "null when none is missing"
        )
    )
    wrong: dict[str, Section] | None = field(
        metadata=key_doc(
            "per wrong carried field or value: count and three examples (identity, output, "
            "expected); null when no input was read"
        )
    )
    trusted: bool | None = field(
        metadata=key_doc(
            "false when the outputs contradict their inputs (wrong carried timestamps or counts, "
            "wrong values, unexplained outputs, negative latencies; the reasons are in "
            "warnings); null when no input was read, so nothing was checked"
        )
    )
    throughput: Throughput = field(
        metadata=key_doc("inputs and outputs per second of the measured period")
    )
    steady_state: Section | None = field(
        metadata=key_doc(
            "slope_ms_per_min, ci95, mk_p, median_ms, seconds, span_s, change_ms, tolerance, "
            "allowed_ms, effective_seconds, method, verdict: Theil–Sen trend of the measured "
            "period's per-second p50, its interval widened for autocorrelation "
            "(evaluator.statistics.steady); change_ms the interval of the change over span_s, "
            "allowed_ms the tolerance it is held against, effective_seconds how many independent "
            "seconds the autocorrelated ones are worth (absent in older results); "
            "verdict steady, rising (overloaded), falling (warming up) or undetermined; null "
            "with too few seconds"
        )
    )
    confidence: Section | None = field(
        metadata=key_doc(
            "method, level, sections, section_s, p50, p99: 95 % intervals [lo, hi] of p50 and "
            "p99 (batch means over consecutive sections)"
        )
    )
    recovery: Section | None = field(
        metadata=key_doc(
            "baseline_window_s, threshold, hold_s, settle_windows, "
            "windows[], summary: after each disturbance (periodic burst: each burst; a fault's "
            "window) that starts in the measured period (evaluator.recovery.section.section); null "
            "without any. windows[]: kind, start_ms, end_ms (broker time), process (the "
            "process group a fault stopped: broker, engine; null for a burst), partial (a "
            "fault of a part of the job: instance-loss), series (what its figures are taken "
            "of: each second's p50 of the outputs appended in it; for a partial fault the p99 "
            "of the outputs whose latest input was appended in it, held by the *_p50_ms "
            "keys), baseline_p50_ms (median per-second p50 of the baseline_window_s before) and "
            "baseline_p50_ci95, peak_ms (largest per-second p50 until recovered), "
            "first_output_after_s, recovery_s (from the window's end until the per-second "
            "p50 stays within threshold of the baseline for hold_s seconds; null: not "
            "recovered before the next window), recovered (null: no baseline); settled (true: "
            "the latency reached a steady level again, wherever; false: none before the next "
            "window or the measured period's end; null: too few seconds to tell), settled_s "
            "(from the window's end to that level; the recovery_s when it is the level before), "
            "settled_p50_ms and settled_p50_ci95 (the level: median per-second p50 from then "
            "to the end of the search, 95 % interval), offset and offset_ci95 (level / "
            "baseline − 1), level (new: the offset's interval wholly beyond threshold, or "
            "not recovered and the offset beyond it; before: the offset within it; else "
            "undetermined; null without a baseline), cause (a fault's process: cpu_percent "
            "and gc_ms_per_s "
            "[before, after], the means over the baseline's seconds and the settled level's; "
            "null for a burst or without samples). summary: windows, recovered, "
            "not_recovered, no_baseline, recovery_s_median, recovery_s_max, peak_ms_median, "
            "peak_ms_max, settled, new_level, not_settled, settled_s_median, settled_s_max, "
            "offset_median"
        )
    )
    input_lateness: Section | None = field(
        metadata=key_doc(
            "inputs, late, p50_ms, p99_ms, p99_9_ms, max_ms, watermark_delay_ms, "
            "at_or_past_delay, within_topic, dropped_by_watermark: a join's or window's valid "
            "inputs and how far each one's observation time lies behind the newest one the "
            "broker appended before it (event-time ms, evaluator.latencies.lateness), how many "
            "were at or past the run's watermark delay, the same per input topic behind the newest "
            "of that topic (within_topic {topic: {inputs, late, p50_ms … max_ms, "
            "at_or_past_delay}}: what a join's watermark sees), and the rows Spark's stateful "
            "operators dropped as later than the watermark, per operator (from "
            "engine_progress.jsonl; null: not recorded); null for the stages without a "
            "watermark"
        )
    )
    updates: Section | None = field(
        metadata=key_doc(
            "windows, complete, never_complete, partial_updates, per_window {mean, p50, max}, "
            "first_update_ms (count, mean, min, p50 … max), first_carried_outside: a stage "
            "written in update mode (tumbling-union). Its latency_ms is each window's "
            "complete update (the first carrying all the window's inputs) from the latest of "
            "them; first_update_ms each window's first update from the latest input it "
            "carries; per_window the updates up to the complete one; partial updates are "
            "neither duplicates nor wrong, a window never complete is missing "
            "(evaluator.latencies.updates); null for the other stages"
        )
    )
    window_closing: Section | None = field(
        metadata=key_doc(
            "event_clock, watermark_delay_ms, windows, never_closed, wait_ms and engine_ms "
            "(count, mean, min, p50 … max): a built-in window's latency split at the input "
            "that let it close, the first after which the engine's event-time clock (the "
            "least of the input topics' newest event times, or the greatest) passed the "
            "window's end plus the delay: wait = that input − the latest input, engine = "
            "output − that input (evaluator.latencies.closing); null for the other stages",
            omit_none=True,
        )
    )
    warmup: Section | None = field(
        metadata=key_doc(
            "mode, seconds, settled, min_s, max_s, window_s, windows, tolerance, application "
            "{shared, age_s, warmed_up}: the warm-up before the measured period, and in a "
            "suite whether the run's query ran in its shared Spark application (age_s: the "
            "application's seconds when the warm-up began) and what warmed that up"
        )
    )
    machine: Section | None = field(
        metadata=key_doc(
            "cores, samples, cpu_total_pct_mean/max, cpu_outside_run_pct_mean/max, "
            "steal_pct_mean, iowait_pct_mean, saturated_share, pace (before_ms, after_ms, "
            "change, work: ms one core took for a fixed piece of work before the job started "
            "and after it stopped, change = after / before − 1, a warning beyond ±15 %), broker "
            "(kind: embedded, container or remote, not sampled; containers, images, "
            "cpu_percent_mean, rss_mb_max): the machine during the measured period, % of one "
            "core"
        )
    )
    evaluation: Evaluation = field(metadata=key_doc("how the run was evaluated"))
    warnings: list[str] = field(
        metadata=key_doc(
            "reasons not to trust the numbers: the run's own (publisher behind schedule, "
            "delivery errors, drain timeout), then the evaluator's; empty when none"
        )
    )

    def as_dict(self) -> dict[str, Any]:
        """summary.json's document."""
        return as_dict(self)
