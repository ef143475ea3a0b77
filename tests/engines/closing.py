"""Which input closed each of a window stage's outputs, read back from its topics
(docs/method.md#window-closing): shared by the engines' pipeline tests.

A built-in window may go out once its **closing input**
(:func:`evaluator.latencies.closing.closing_times`) has moved the engine's event-time clock
the watermark delay past its end. The tests then publish nothing more until the job has
drained, so a window written before the next input was closed by that input, not by a later
one: an order of broker appends, not a latency bound. Kafka Streams' hopping window over
the closed seconds failed it: it went out only once a later second arrived.
"""

from dataclasses import dataclass

import numpy as np

from evaluator.config import EvaluatorConfig
from evaluator.latencies.closing import EventClock, closing_times
from evaluator.model.run_info import RunInfo
from evaluator.outputs.expected import valid_mask
from evaluator.run_topics import read_inputs, read_outputs
from evaluator.topics.reader import TIMESTAMP
from ground import contract as s


@dataclass(frozen=True)
class Window:
    """One output window, its times in broker ms."""

    end_s: int
    """Its end, in seconds after the inputs' first second."""
    written: int
    closed: float
    """The append of its closing input (NaN: no input closed it)."""
    closed_in_s: float
    """The second the event-time clock was in when it closed, as ``end_s``."""
    later: float
    """The append of the first input that moved the clock past that second (NaN: none)."""


def closing(bootstrap: str, run: RunInfo, delay_ms: int, clock: EventClock) -> list[Window]:
    """Each output of ``run`` (a built-in tumbling or sliding window stage) against the
    inputs of its topics."""
    config = EvaluatorConfig()
    outputs = read_outputs(bootstrap, run, config)
    outputs = outputs[outputs[s.WINDOW_START].notna()]
    inputs = read_inputs(bootstrap, run, config)
    assert inputs is not None
    length = s.SECOND_MS * (config.sliding_window_s if run.stage == "sliding" else 1)
    ends = outputs[s.WINDOW_START].to_numpy(np.int64) + length
    closed = closing_times(inputs, ends, delay_ms, clock)
    valid = inputs[valid_mask(inputs)].sort_values(TIMESTAMP, kind="stable")
    first = int(valid[s.OBSERVATION_TS].min())
    broker = valid[TIMESTAMP].to_numpy(np.int64)
    newest = np.maximum.accumulate(valid[s.OBSERVATION_TS].to_numpy(np.int64))
    known = ~np.isnan(closed)
    at = np.searchsorted(broker, closed[known].astype(np.int64), side="right") - 1
    second = np.full(len(ends), np.nan)
    second[known] = newest[at] // s.SECOND_MS * s.SECOND_MS
    later = np.full(len(ends), np.nan)
    later[known] = closing_times(inputs, second[known].astype(np.int64) + s.SECOND_MS, 0, clock)
    written = outputs[TIMESTAMP].to_numpy(np.int64)
    return [
        Window(int(e - first) // s.SECOND_MS, int(w), c, (n - first) / s.SECOND_MS, lt)
        for e, w, c, n, lt in zip(ends, written, closed, second, later, strict=True)
    ]


def closed_by(windows: list[Window], second: int) -> list[Window]:
    """The windows the clock's entering ``second`` closed."""
    return [w for w in windows if w.closed_in_s == second]


def out_of_turn(windows: list[Window]) -> list[Window]:
    """The windows written before their closing input, or only after a later one."""
    return [w for w in windows if not w.closed <= w.written < np.nan_to_num(w.later, nan=np.inf)]
