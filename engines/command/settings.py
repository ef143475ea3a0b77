"""The table ``[engine.command]``: the user's command, how its readiness and its drain are
told, and how long it is given to stop."""

from dataclasses import dataclass, field

from engines.config import EngineSettings, PipelineConfig
from ground.config import require
from ground.errors import ConfigError

READY = ("first-output", "file")


@dataclass(frozen=True)
class CommandSettings(EngineSettings):
    """``[engine.command]``: your job, run as a command (docs/own-pipeline.md)."""

    job: str = field(
        default="",
        metadata={
            "help": "the command that runs your job, run by /bin/sh in the directory "
            "stagebench was started in, with STAGEBENCH_BOOTSTRAP, STAGEBENCH_INPUT_TOPICS, "
            "STAGEBENCH_OUTPUT_TOPIC, STAGEBENCH_SCRATCH_DIR and STAGEBENCH_READY_FILE set "
            "(docs/own-pipeline.md); it implies --engine command, and --stage job unless a "
            "stage is named",
            "default": "none",
            "option": "--job",
            "metavar": "CMD",
        },
    )
    ready: str = field(
        default="first-output",
        metadata={
            "help": "when the job counts as running: first-output (at once; the publisher "
            "starts, the warm-up covers the job's start, and a job with no output within "
            "first_output_s of the first input has failed) or file (once the job creates "
            "the file STAGEBENCH_READY_FILE names)",
            "choices": READY,
        },
    )
    first_output_s: float = field(
        default=120.0,
        metadata={"help": "with ready = first-output: how long after the first input the "
                  "job's first output may take"},
    )  # fmt: skip
    quiet_ms: int = field(
        default=2000,
        metadata={
            "help": "the job has drained when its output topic grew by nothing for this "
            "long (what stagebench can see of a job it did not write)"
        },
    )
    grace_s: float = field(
        default=10.0,
        metadata={"help": "at the end: SIGTERM to every process of the job, SIGKILL to "
                  "those left after this long"},
    )  # fmt: skip

    def __post_init__(self) -> None:
        require(self.ready in READY, f"ready must be one of {', '.join(READY)}, got {self.ready!r}")
        require(self.first_output_s > 0, "first_output_s must be > 0")
        require(self.quiet_ms > 0, "quiet_ms must be > 0")
        require(self.grace_s >= 0, "grace_s must be >= 0")

    def check(self, pipeline: PipelineConfig, input_partitions: int, fault: str | None) -> None:
        if not self.job.strip():
            raise ConfigError(
                "the command engine runs your job: give its command with --job 'CMD' or "
                "[engine.command] job"
            )
