"""Names of a run's topics: fresh ones per run, derived from its run id."""

import uuid
from dataclasses import dataclass

PREFIX = "stagebench"


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]


@dataclass(frozen=True)
class RunTopics:
    speed: str
    flow: str
    output: str

    @classmethod
    def for_run(cls, run_id: str) -> "RunTopics":
        return cls(f"{PREFIX}-{run_id}-speed", f"{PREFIX}-{run_id}-flow", f"{PREFIX}-{run_id}-out")

    @property
    def inputs(self) -> list[str]:
        return [self.speed, self.flow]

    @property
    def all(self) -> list[str]:
        return [self.speed, self.flow, self.output]


def run_of(topic: str) -> str | None:
    """The run a stagebench topic belongs to (``stagebench-<run id>``: its inputs, output
    and an engine's internal topics, which carry the run id after the prefix); None for a
    topic stagebench did not name."""
    head, _, rest = topic.partition("-")
    run_id = rest.partition("-")[0]
    return f"{PREFIX}-{run_id}" if head == PREFIX and run_id else None
