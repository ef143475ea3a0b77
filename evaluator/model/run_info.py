"""What the evaluator needs to know about a run, and its ``run.json`` file.

The run orchestrator writes ``run.json`` into the run directory; ``stagebench
evaluate RUN_DIR`` reads it back. ``metadata`` and ``config`` are stored
verbatim in summary.json (versions, machine, configurations, publisher summary,
resource metrics), so the evaluator never needs to understand them.
``disturbances`` are windows in broker time (bursts, faults) whose recovery the
evaluator reports (:mod:`evaluator.recovery`).
"""

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from evaluator.recovery.windows import Window
from ground import files, rundir
from ground.errors import EvaluationError
from ground.stages import STAGES

RUN_FILE = rundir.RUN


class RunMetadata(TypedDict, total=False):
    """What the run flow records of a run beside what it is, kept verbatim as
    summary.json's ``metadata``; a run evaluated alone (``evaluate --output-topic``) has
    none of it."""

    versions: dict[str, Any]
    """stagebench's, the broker's (a broker it started) and the engine's."""
    machine: dict[str, Any]
    """The host (processor, memory) and what the run used of it."""
    started_at: str
    ended_at: str
    kafka_client: list[str]
    """The names of the client properties of a secured cluster (STAGEBENCH_KAFKA_PROPERTIES)
    the run's clients took; absent without any."""
    publisher: dict[str, Any]
    """The publisher's summary (publisher.json)."""
    resources: dict[str, Any]
    """CPU, memory, heap and GC per process group, sampled each second."""
    leaders: dict[str, Any]
    """Each topic's partition leaders ``before`` and ``after`` the run: one clock."""
    faults: list[dict[str, Any]]
    marks_ms: dict[str, Any]
    """The run's moments on the broker's clock (``job_started_ms``, the measured period)."""
    warmup: dict[str, Any]
    warnings: list[str]
    dropped_by_watermark: dict[str, int] | None
    """Rows the engine dropped as later than its watermark, per operator."""


class RunSection(TypedDict):
    """summary.json's ``run`` section: what was run, how, and on which Kafka
    (:meth:`RunInfo.as_summary`)."""

    id: str
    stage: str
    engine: NotRequired[str | None]
    """The stream engine that ran it; absent from summaries made before engines were named."""
    impl: str
    workload: str
    rate: float | None
    duration_s: float | None
    bootstrap: str | None
    """The Kafka the run used."""
    input_topics: list[str]
    output_topic: str
    start_ms: int | None
    end_ms: int | None


@dataclass(frozen=True)
class RunInfo:
    """One run: its stage, topics and measured period (epoch ms, optional)."""

    id: str
    stage: str
    output_topic: str
    input_topics: tuple[str, ...] = ()
    impl: str = "builtin"
    engine: str | None = None
    """The stream engine that ran it (None: a run.json written before engines were named)."""
    event_clock: str | None = None
    """How the engine's event-time clock combines the input topics: "least" (a watermark),
    "greatest" (Kafka Streams' stream time) (evaluator.latencies.closing); None: not said."""
    carries_inputs: bool = True
    """Its outputs must carry their inputs' broker times (stagebench's engines); False: a
    user's job, whose outputs the evaluator fills from the inputs they name where they
    carry none (:func:`evaluator.outputs.own_job.filled`)."""
    workload: str = "latency"
    rate: float | None = None
    duration_s: float | None = None
    bootstrap: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    metadata: RunMetadata = field(default_factory=RunMetadata)
    config: dict[str, Any] = field(default_factory=dict)
    disturbances: tuple[Window, ...] = ()

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise EvaluationError(f"unknown stage {self.stage!r} (known: {', '.join(STAGES)})")
        object.__setattr__(self, "input_topics", tuple(self.input_topics))
        # run.json holds them as objects
        windows = tuple(w if isinstance(w, Window) else Window(**w) for w in self.disturbances)
        object.__setattr__(self, "disturbances", windows)

    def as_summary(self) -> RunSection:
        """The ``run`` section of summary.json."""
        return RunSection(
            id=self.id,
            stage=self.stage,
            engine=self.engine,
            impl=self.impl,
            workload=self.workload,
            rate=self.rate,
            duration_s=self.duration_s,
            bootstrap=self.bootstrap,
            input_topics=list(self.input_topics),
            output_topic=self.output_topic,
            start_ms=self.start_ms,
            end_ms=self.end_ms,
        )

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["input_topics"] = list(self.input_topics)
        return json.dumps(data, indent=2, sort_keys=True)


def load_run(run_dir: Path) -> RunInfo:
    """Read ``RUN_DIR/run.json``; EvaluationError if missing or not a run."""
    path = Path(run_dir) / RUN_FILE
    try:
        data = json.loads(path.read_text())
        return RunInfo(**data)
    except FileNotFoundError as err:
        raise EvaluationError(f"{path} not found: is {run_dir} a run directory?") from err
    except (json.JSONDecodeError, TypeError) as err:
        raise EvaluationError(f"{path} is not a valid run file: {err}") from err


def save_run(run: RunInfo, run_dir: Path) -> Path:
    """Write ``run.json`` (for the orchestrator and tests)."""
    path = Path(run_dir) / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write(path, run.to_json() + "\n")
    return path
