"""Names of a run's topics: fresh ones per run, derived from its run id."""

import re
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
    """The run a topic of stagebench's belongs to: ``stagebench-<run id>`` for a run's
    inputs, output and an engine's internal topics (``stagebench-<run id>-…``), the topic
    itself for a smoke test's (``stagebench-smoke-<id>``); None for any other topic."""
    if match := _SMOKE.fullmatch(topic):
        return match[0]
    if match := _RUN.match(topic):
        return match[1]
    return None


_RUN = re.compile(rf"({PREFIX}-[0-9a-f]{{8}})-.")
_SMOKE = re.compile(rf"{PREFIX}-smoke-[0-9a-f]{{8}}")
