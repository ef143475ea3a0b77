"""The configurations one run hands to its three roles, assembled from the settings and
the run's own names (topics, run id, checkpoint) and validated together before anything
starts (docs/method.md#workloads); the effective configuration is stored as config.json.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.config import PipelineConfig
from evaluator.config import EvaluatorConfig
from ground import rundir
from ground.config import as_dict, from_mapping, require
from ground.kafka.naming import RunTopics
from ground.stages import stage
from publisher.config import PublisherConfig
from publisher.workload import workload
from stagebench.config.layers import ENGINE_TABLE, Settings
from stagebench.config.settings import RunConfig

PUBLISH_MARGIN_S = 60.0
"""The publisher's schedule runs this much past the planned end; the runner stops it."""


@dataclass(frozen=True)
class RoleConfigs:
    """The publisher's, the job's and the evaluator's configuration for one run."""

    publisher: PublisherConfig
    pipeline: PipelineConfig
    evaluator: EvaluatorConfig

    def effective(self, run: RunConfig, settings: Settings) -> dict[str, Any]:
        """config.json's document: every value the run used and where each came from;
        the engine's own settings under ``engine.<name>``, as in a configuration file."""
        pipeline = as_dict(self.pipeline)
        engine = pipeline.pop("settings")
        tables = {f"{ENGINE_TABLE}.{run.runs_on().name}": engine} if engine is not None else {}
        return {
            "run": as_dict(run),
            "publisher": as_dict(self.publisher),
            "pipeline": pipeline,
            **tables,
            "evaluator": as_dict(self.evaluator),
            # an engine's table only where the run's engine has it
            "sources": {
                section: given
                for section, given in settings.sources.items()
                if not section.startswith(f"{ENGINE_TABLE}.") or section in tables
            },
        }


def assemble(
    run: RunConfig,
    settings: Settings,
    bootstrap: str,
    run_id: str,
    run_dir: Path,
    topics: RunTopics,
) -> RoleConfigs:
    """Every role's configuration, built and validated; ConfigError on any bad value or
    combination."""
    publisher = publisher_config(run, settings, topics)
    pipeline = from_mapping(
        PipelineConfig,
        {
            **settings.section("pipeline"),
            "stage": run.stage,
            "engine": run.engine,
            "impl": run.impl,
            "settings": settings.section(f"{ENGINE_TABLE}.{run.runs_on().name}"),
            "bootstrap": bootstrap,
            "speed_topic": topics.speed,
            "flow_topic": topics.flow,
            "output_topic": topics.output,
            "run_id": run_id,
            "checkpoint_dir": (
                f"{run.checkpoint_root.rstrip('/')}/{run_dir.name}"
                if run.checkpoint_root
                else str(run_dir / rundir.CHECKPOINT)
            ),
        },
        "pipeline",
    )
    # the run marks where measuring starts (after its warm-up, or at the job's start
    # after a backlog) in broker time: the evaluator trims nothing more
    evaluator = from_mapping(
        EvaluatorConfig,
        {
            **settings.section("evaluator"),
            "warmup_s": 0.0,
            "sliding_window_s": pipeline.window_length_ms // 1000,
            "lookback_short_s": pipeline.lookback_short_ms // 1000,
            "lookback_long_s": pipeline.lookback_long_ms // 1000,
        },
        "evaluator",
    )
    check_combination(run, publisher, pipeline)
    return RoleConfigs(publisher, pipeline, evaluator)


def publisher_config(run: RunConfig, settings: Settings, topics: RunTopics) -> PublisherConfig:
    """The publisher's configuration of a run on ``topics``: it needs no broker, so a
    replay file can be read and checked before one is started."""
    return from_mapping(PublisherConfig, _publisher_mapping(run, settings, topics), "publisher")


def validate(run: RunConfig, settings: Settings) -> None:
    """ConfigError when :func:`assemble` would refuse these settings, checked before a
    broker is started or reached: the run's own names are placeholders here."""
    name = "validate"
    assemble(run, settings, run.bootstrap or "localhost:9092", name,
             Path(run.results_dir) / name, RunTopics.for_run(name))  # fmt: skip


def check_combination(run: RunConfig, publisher: PublisherConfig, pipeline: PipelineConfig) -> None:
    """Settings each valid alone whose combination would make the results wrong."""
    last = stage(run.stage)
    require(
        publisher.time_scale == 1 or not last.stateful,
        "time_scale must be 1 for join and window stages: event time is the wall-clock "
        "second, so two data minutes in one second would share their join key",
    )
    require(
        pipeline.window_slide_ms == 1000,
        "the evaluator checks sliding windows with a 1 s slide only (window_slide_ms = 1000)",
    )
    if pipeline.settings is not None:
        # the run creates both input topics with run.partitions each
        pipeline.settings.check(pipeline, 2 * run.partitions, run.fault)
    if last.window:
        # a built-in window closes once event time passes its end plus the watermark
        # delay, and each chained operator needs one more batch
        needed_s = (pipeline.watermark_delay_ms + 2000) / 1000
        require(
            run.tail_s >= needed_s,
            f"tail_s must be at least {needed_s:g} s (watermark delay + 2 s) so the last "
            "windows of the measured period close",
        )


def _publisher_mapping(run: RunConfig, settings: Settings, topics: RunTopics) -> dict[str, Any]:
    section = settings.section("publisher")
    # an upper bound: the runner stops the publisher once the tail is over, since the
    # warm-up (auto) and the job's start (after a backlog) take as long as they take
    duration = run.duration_s + run.tail_s + PUBLISH_MARGIN_S
    # the command line's (or [run]'s) lead-in, else [publisher]'s
    lead_in = run.lead_in_s or float(section.get("lead_in_s", 0.0))
    if workload(run.workload).backlog_first:
        backlog = section.get("backlog_s", PublisherConfig.backlog_s)
        duration += backlog + run.ready_timeout_s
    else:
        duration += lead_in
        duration += run.warmup_max_s if run.warmup_s == "auto" else float(run.warmup_s)
    return {
        **section,
        "rate": run.rate,
        "workload": run.workload,
        "lead_in_s": lead_in,
        "duration_s": duration,
        "speed_topic": topics.speed,
        "flow_topic": topics.flow,
    }
