"""A user's job: its outputs name their latest input, and nothing they carry is believed."""

import dataclasses

import numpy as np
import pandas as pd

from evaluator.config import EvaluatorConfig
from evaluator.files import report
from evaluator.measure import measure
from evaluator.model.record import from_dict
from evaluator.model.result import Summary
from evaluator.model.run_info import RunInfo
from evaluator.outputs import checks, own_job
from evaluator.summary import build_summary
from evaluator.topics.reader import OFFSET, PARTITION, TIMESTAMP, TIMESTAMP_TYPE, TOPIC
from ground import contract as s
from stagebench.report.summary_table import format_runs
from tests.evaluator.test_measure import RUN, _inputs, _outputs

JOB = dataclasses.replace(RUN, stage="job", input_topics=("speed",))


def _raw_inputs(ts: list[int]) -> pd.DataFrame:
    """Inputs as a raw stage reads them: broker columns and the schedule."""
    frame = _inputs(ts)
    return frame[[TOPIC, PARTITION, OFFSET, TIMESTAMP, TIMESTAMP_TYPE, s.SCHEDULED_TS]]


def _job_outputs(named: list[int], latency: list[int], ts: list[int]) -> pd.DataFrame:
    """One output per entry, naming input offset ``named[i]``, ``latency[i]`` after it."""
    n = len(named)
    return pd.DataFrame(
        {
            PARTITION: 0, OFFSET: np.arange(n), TIMESTAMP_TYPE: 2,
            TIMESTAMP: [ts[o] + lat if 0 <= o < len(ts) else 0 + lat
                        for o, lat in zip(named, latency, strict=True)],
            s.SOURCE_TOPIC: pd.Categorical(["speed"] * n), s.SOURCE_PARTITION: 0,
            s.SOURCE_OFFSET: named,
            s.INPUT_TS_LATEST: pd.array([None] * n, "Int64"),
            s.INPUT_TS_EARLIEST: pd.array([None] * n, "Int64"),
            s.INPUT_COUNT: pd.array([None] * n, "Int64"),
        }
    )  # fmt: skip


def _summary(outputs: pd.DataFrame, inputs: pd.DataFrame) -> dict:
    config = EvaluatorConfig(warmup_s=0)
    return build_summary(JOB, config, "b:1", measure(JOB, config, outputs, inputs)).as_dict()


def test_a_filter_is_measured_from_the_inputs_it_names():
    ts = [1000 * i for i in range(10)]
    # every second input passes the filter, 7 ms later; the others are dropped
    summary = _summary(_job_outputs([0, 2, 4, 6, 8], [7] * 5, ts), _raw_inputs(ts))
    assert summary["trusted"] is True, summary["warnings"]
    assert summary["latency_ms"]["p50"] == 7 and summary["latency_ms"]["count"] == 5
    records = summary["records"]
    assert records["unreferenced_inputs"] == 5 and records["unexpected"] == 0
    assert records["expected"] is None and records["missing"] is None
    assert summary["missing"] is None and not any("missing" in w for w in summary["warnings"])
    assert "| unreferenced_inputs | 5 |" in report.markdown(summary)
    printed = format_runs([from_dict(Summary, summary)])
    assert "job: 5 of 10 measured inputs named by no output" in printed


def test_an_output_naming_a_wrong_offset_makes_the_run_untrusted():
    ts = [1000 * i for i in range(10)]
    outputs = _job_outputs([0, 1, 2, 99], [5] * 4, ts)  # offset 99: no input of the run
    summary = _summary(outputs, _raw_inputs(ts))
    assert summary["trusted"] is False
    assert summary["records"]["unexpected"] == 1 and summary["latency_ms"]["count"] == 3
    assert any("explained by no input" in w for w in summary["warnings"])


def test_a_carried_timestamp_is_checked_against_the_topic():
    ts = [1000 * i for i in range(6)]
    outputs = _job_outputs([0, 1, 2, 3], [5] * 4, ts)
    outputs[s.INPUT_TS_LATEST] = pd.array([0, 1000, 2500, None], "Int64")  # the third: wrong
    summary = _summary(outputs, _raw_inputs(ts))
    assert summary["records"]["input_ts_mismatch"] == 1 and summary["trusted"] is False
    # the latency is the topic's, never the carried one
    assert summary["latency_ms"]["max"] == 5
    # what a job need not carry is not held against it
    assert summary["records"]["input_ts_earliest_mismatch"] == 0
    assert summary["records"]["input_count_mismatch"] == 0


def test_an_output_naming_no_input_at_all_is_malformed():
    ts = [1000 * i for i in range(4)]
    outputs = _job_outputs([0, 1, 2], [5] * 3, ts)
    outputs[s.SOURCE_OFFSET] = pd.array([0, None, 2], "Int64")
    summary = _summary(outputs, _raw_inputs(ts))
    assert summary["records"]["malformed_outputs"] == 1
    assert summary["latency_ms"]["count"] == 2


def test_a_run_of_the_ladder_has_no_unreferenced_count():
    inputs = _inputs([0, 1000])
    result = measure(RUN, EvaluatorConfig(), _outputs(inputs, [1, 1]), inputs)
    assert (
        "unreferenced_inputs"
        not in build_summary(RUN, EvaluatorConfig(), "b:1", result).as_dict()["records"]
    )


# a job claiming a stage of the ladder (--job … --stage S): what docs/own-pipeline.md
# calls optional is taken from the inputs, as it is for stage job
CLAIMED = dataclasses.replace(RUN, stage="ingest", input_topics=("speed",), carries_inputs=False)


def _claimed(run: RunInfo, outputs: pd.DataFrame, inputs: pd.DataFrame) -> dict:
    config = EvaluatorConfig(warmup_s=0)
    return build_summary(run, config, "b:1", measure(run, config, outputs, inputs)).as_dict()


def test_a_pass_through_claiming_ingest_with_only_the_naming_fields_is_trusted():
    ts = [1000 * i for i in range(10)]
    summary = _claimed(CLAIMED, _job_outputs(list(range(10)), [4] * 10, ts), _raw_inputs(ts))
    assert summary["trusted"] is True, summary["warnings"]
    records = summary["records"]
    assert records["malformed_outputs"] == 0 and records["missing"] == 0
    assert records["outputs"] == records["expected"] == 10
    assert records["input_ts_mismatch"] == records["input_count_mismatch"] == 0
    assert summary["latency_ms"]["count"] == 10 and summary["latency_ms"]["p50"] == 4
    # stagebench's own engines must still carry them: their outputs are malformed
    strict = _claimed(
        dataclasses.replace(CLAIMED, carries_inputs=True),
        _job_outputs(list(range(10)), [4] * 10, ts),
        _raw_inputs(ts),
    )
    assert strict["records"]["malformed_outputs"] == 10
    assert "10 malformed outputs: " in " ".join(strict["warnings"])


def test_what_a_claiming_job_carries_is_checked_and_what_it_lacks_is_filled():
    ts = [1000 * i for i in range(6)]
    inputs = _inputs(ts)
    outputs = _outputs(inputs, [5] * 6).assign(**{s.SPEED: 1.0, s.FLOW: np.nan})
    outputs[s.INPUT_TS_LATEST] = pd.array([None, None, 2000, 3000, None, None], "Int64")
    outputs[s.INPUT_TS_EARLIEST] = pd.array([None] * 6, "Int64")
    outputs[s.INPUT_COUNT] = pd.array([None, 1, 1, 2, None, None], "Int64")  # the fourth: wrong
    run = dataclasses.replace(CLAIMED, stage="parse")
    summary = _claimed(run, outputs, inputs)
    records = summary["records"]
    assert records["malformed_outputs"] == 0 and records["input_ts_mismatch"] == 0
    assert records["input_count_mismatch"] == 1 and summary["trusted"] is False
    assert summary["latency_ms"]["count"] == 6


def test_a_stage_written_at_every_update_still_needs_what_its_updates_carry():
    from evaluator.outputs.own_job import fills

    assert not fills("tumbling-union")
    assert all(fills(name) for name in ("job", "ingest", "parse", "join", "tumbling", "sliding"))


def test_a_claiming_job_s_topics_are_read_whole():
    from evaluator.run_topics import read_from_ms

    config = EvaluatorConfig(read_before_s=10)
    marked = dataclasses.replace(CLAIMED, start_ms=60_000, carries_inputs=True)
    assert read_from_ms(marked, config) == 50_000
    assert read_from_ms(dataclasses.replace(marked, carries_inputs=False), config) is None


def test_identity_columns_read_as_floats_are_looked_up_as_int64(monkeypatch):
    """A column with nulls can come as float64: the complete rows' identity reaches the
    lookup as int64, so it takes the packed search, not a pandas merge of floats."""
    seen = []

    def spy(outputs: pd.DataFrame, expected: pd.DataFrame, identity) -> np.ndarray:
        seen.append({c: outputs[c].dtype for c in identity})
        return checks.lookup(outputs, expected, identity)

    monkeypatch.setattr(own_job, "lookup", spy)
    ts = [1000 * i for i in range(10)]
    outputs = _job_outputs(list(range(10)), [4] * 10, ts)
    outputs[s.SOURCE_OFFSET] = (
        outputs[s.SOURCE_OFFSET].astype(float).where(outputs[s.SOURCE_OFFSET] != 3)
    )  # one output names no offset: the column is float64, as with nulls
    outputs[s.SOURCE_PARTITION] = outputs[s.SOURCE_PARTITION].astype(float)
    summary = _claimed(CLAIMED, outputs, _raw_inputs(ts))
    assert summary["records"]["malformed_outputs"] == 1 and summary["trusted"] is True
    assert summary["latency_ms"]["count"] == 9 and summary["latency_ms"]["p50"] == 4
    (dtypes,) = seen
    assert dtypes[s.SOURCE_OFFSET] == dtypes[s.SOURCE_PARTITION] == np.int64
