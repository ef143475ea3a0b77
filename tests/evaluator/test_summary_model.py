"""The typed summary writes summary.json exactly as the dict-built one did.

summary_golden.json holds, for a few hand-made runs, the summary.json text the
evaluator wrote before the result model existed (its ``versions`` left out: they
name this machine's libraries); the model must give the same keys, in the same
order, with the same values, besides the keys added since (:data:`ADDED`). What the
steadiness' seconds are worth (``steady_state.effective_seconds`` and the warning that
names it) was written into the golden file when it was added, and the steadiness
(its figures, method and warning) again when the autocorrelation's reach was bounded
by the series' length; likewise the recovery's level after each window (``settled``,
its interval, offset and cause, the baseline's interval) when it was added. The
evaluator settings removed since (engine, log_scale, plots) were taken out of its
``config``, and the run's stream engine (``run.engine``, null for these runs) put in.
"""

import dataclasses
import json
from pathlib import Path

from evaluator.config import EvaluatorConfig
from evaluator.measure import measure
from evaluator.model.run_info import RunInfo
from evaluator.recovery.windows import Window
from evaluator.run_topics import read_from_ms
from evaluator.summary import build_summary
from ground import contract as s
from tests.evaluator.test_measure import RUN, _inputs, _outputs

GOLDEN = Path(__file__).with_name("summary_golden.json")
ADDED = ("input_lateness", "updates")
"""Keys summary.json gained after the golden file was written (a key added keeps the
schema version: readers ignore what they do not know)."""
ADDED_IF_READ = ("latency_intended",)
"""Keys added since that a summary holds only when the inputs were read."""


def _backlog_with_bursts() -> dict:
    ts = [i * 100 for i in range(1200)]
    inputs = _inputs(ts)
    latencies = [max(31_000 - 2 * t // 3, 100) for t in ts]
    run = dataclasses.replace(
        RUN,
        metadata={"marks_ms": {"job_started_ms": 30_000}, "warnings": ["publisher behind"],
                  "machine": {"cores": 2}, "warmup": {"mode": "fixed", "seconds": 0}},
        config={"publisher": {"rate": 10}},
        disturbances=(Window("burst", 60_000, 61_000), Window("burst", 90_000, 91_000)),
    )  # fmt: skip
    config = EvaluatorConfig(warmup_s=0)
    return _summary(run, config, _outputs(inputs, latencies), inputs)


def _read_from_a_time() -> dict:
    inputs = _inputs([1000 * i for i in range(10)])
    outputs = _outputs(inputs, [100] * 10)
    run = dataclasses.replace(RUN, start_ms=5000, end_ms=9000)
    config = EvaluatorConfig(warmup_s=0, read_before_s=2)
    from_ms = read_from_ms(run, config)
    return _summary(run, config, outputs.iloc[2:], inputs.iloc[3:], from_ms)


def _wrong_and_missing() -> dict:
    inputs = _inputs([1000 * i for i in range(30)])
    outputs = _outputs(inputs, [40 + (i * 7) % 13 for i in range(30)]).drop(index=[4, 5])
    outputs = outputs.reset_index(drop=True)
    outputs.loc[3, s.INPUT_TS_EARLIEST] += 1
    outputs.loc[7, s.INPUT_COUNT] = 2
    outputs.loc[9, s.SOURCE_OFFSET] = 99
    return _summary(RUN, EvaluatorConfig(warmup_s=2), outputs, inputs)


def _no_inputs_read() -> dict:
    inputs = _inputs([1000 * i for i in range(20)])
    run = RunInfo(id="r2", stage="parse", output_topic="out", bootstrap="k:9092")
    return _summary(run, EvaluatorConfig(), _outputs(inputs, [5] * 20), None)


CASES = {
    "backlog_with_bursts": _backlog_with_bursts,
    "read_from_a_time": _read_from_a_time,
    "wrong_and_missing": _wrong_and_missing,
    "no_inputs_read": _no_inputs_read,
}


def _summary(run, config, outputs, inputs, from_ms=None) -> dict:
    result = measure(run, config, outputs, inputs, from_ms)
    return {**build_summary(run, config, "b:1", result).as_dict(), "versions": "(this machine's)"}


def _text(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=False)


def test_the_summary_is_what_summary_json_held_before_the_model():
    golden = json.loads(GOLDEN.read_text())
    assert list(golden) == list(CASES)
    for name, case in CASES.items():
        doc = case()
        assert set(ADDED) <= set(doc), name
        assert ("latency_intended" in doc) == (name != "no_inputs_read"), name
        kept = {key: value for key, value in doc.items() if key not in ADDED + ADDED_IF_READ}
        assert _text(kept) == _text(golden[name]), name
