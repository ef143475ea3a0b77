"""The latency from the intended send time: a publisher behind its schedule cannot hide."""

import dataclasses

import numpy as np
import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.files import report
from evaluator.latencies import intended
from evaluator.latencies.latency import LATENCY, measured_period
from evaluator.measure import measure
from evaluator.model.run_info import RunInfo
from evaluator.summary import build_summary
from evaluator.text.caveats import send_delay_warning
from evaluator.topics.reader import TIMESTAMP
from ground import contract as s
from tests.evaluator.test_measure import _inputs, _outputs

RUN = RunInfo(
    id="r1", stage="parse", output_topic="out", input_topics=("speed",),
    metadata={"machine": {"broker": {"kind": "embedded"}}},
)  # fmt: skip


def _behind(lag_ms: list[int]) -> pd.DataFrame:
    """Inputs one a second, each appended ``lag_ms`` after its scheduled send time."""
    inputs = _inputs([1000 * i + lag for i, lag in enumerate(lag_ms)])
    inputs[s.SCHEDULED_TS] = [1000 * i for i in range(len(lag_ms))]
    return inputs


def test_a_publisher_behind_its_schedule_adds_its_lag_to_each_output():
    lags = [0, 0, 0, 400, 900, 1500, 2000, 2600, 3100, 3500]
    inputs = _behind(lags)
    outputs = _outputs(inputs, [10] * 10)
    result = measure(RUN, EvaluatorConfig(warmup_s=0), outputs, inputs)
    found = result.intended
    assert found is not None and found["same_clock"] is True
    assert result.latency_ms["max"] == 10  # the broker clock sees none of the lag
    assert found["latency_ms"]["max"] == 3510 and found["latency_ms"]["min"] == 10
    assert found["send_delay_ms"]["max"] == 3500 and found["send_delay_ms"]["count"] == 10


def test_the_run_says_why_the_two_latencies_differ():
    inputs = _behind([0, 0, 0, 400, 900, 1500, 2000, 2600, 3100, 3500])
    result = measure(RUN, EvaluatorConfig(warmup_s=0), _outputs(inputs, [10] * 10), inputs)
    summary = build_summary(RUN, EvaluatorConfig(warmup_s=0), "b:1", result).as_dict()
    said = [w for w in summary["warnings"] if "scheduled send time" in w]
    assert len(said) == 1 and "up to 3,500 ms" in said[0] and "fell behind" in said[0]
    assert "p99 3,474 ms" in said[0]  # the intended p99, beside the broker clock's 10 ms
    assert summary["latency_intended"]["latency_ms"]["p50"] == 1210
    text = report.markdown(summary)
    assert "intended send time" in text and "| p50 | 10 | 10 | 1,210 | 1,200 |" in text


def test_a_publisher_on_schedule_gives_no_warning():
    inputs = _behind([3] * 10)
    result = measure(RUN, EvaluatorConfig(warmup_s=0), _outputs(inputs, [10] * 10), inputs)
    assert result.intended["latency_ms"]["p50"] == 13
    assert send_delay_warning(result.intended, result.latency_ms) == []
    # the same delay held against a tighter bound is reported
    assert send_delay_warning(result.intended, result.latency_ms, warn_ms=2)


def test_a_broker_on_another_host_makes_the_figures_approximate():
    inputs = _behind([0, 0, 0, 0, 500, 500, 500, 500, 500, 500])
    remote = dataclasses.replace(RUN, metadata={"machine": {"broker": {"kind": "remote"}}})
    result = measure(remote, EvaluatorConfig(warmup_s=0), _outputs(inputs, [1] * 10), inputs)
    assert result.intended["same_clock"] is False
    (said,) = send_delay_warning(result.intended, result.latency_ms)
    assert "another host" in said
    unknown = dataclasses.replace(RUN, metadata={})
    result = measure(unknown, EvaluatorConfig(warmup_s=0), _outputs(inputs, [1] * 10), inputs)
    assert result.intended["same_clock"] is None


def test_inputs_of_one_millisecond_give_their_largest_delay():
    ts = np.array([5, 5, 7, 5], np.int64)
    ms, delay = intended.send_delays(ts, np.array([1, 9, 2, 4], np.int64))
    assert ms.tolist() == [5, 7] and delay.tolist() == [9, 2]
    measured = pd.DataFrame({TIMESTAMP: [25, 27, 30], LATENCY: [20, 20, 20]})
    got = intended.intended_latencies(measured, (ms, delay))
    assert got[:2].tolist() == [29, 22] and np.isnan(got[2])  # no input appended at 10


def test_inputs_without_a_schedule_give_no_section():
    inputs = _behind([0] * 5).drop(columns=s.SCHEDULED_TS)
    period = measured_period(0, 5000, EvaluatorConfig(warmup_s=0))
    assert intended.section(_outputs(inputs, [1] * 5), inputs, period, "embedded") is None
    assert intended.section(_outputs(inputs, [1] * 5), None, period, "embedded") is None
