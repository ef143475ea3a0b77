"""The faulty-event workload through the real CLI: the join stage counts and drops every
malformed input, never stops, and still produces every output of the valid ones."""

import json

import pytest

from ground import malformed as m
from tests.stagebench.run.test_runs import _job_pids, stagebench

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]

FRACTION = 0.05
"""Of all records: at 400 valid msg/s over the 20 s published (5 s warm-up, 10 s measured,
5 s tail) about 420 malformed ones, 46 of each of the nine kinds (one of each needs 171
valid records: under half a second)."""


def test_the_join_drops_every_kind_of_malformed_input_and_misses_no_output(
    kafka_bootstrap, tmp_path
):
    config = tmp_path / "faulty.toml"
    config.write_text(f"[publisher]\nfaulty_fraction = {FRACTION}\n")
    results = tmp_path / "results"
    result = stagebench(
        "run", "--stage", "join", "--workload", "faulty-event", "--config", str(config),
        "--duration", "10", "--warmup", "5", "--tail", "5",
        "--bootstrap", kafka_bootstrap, "--results", str(results),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = next(results.glob("*-join-*"))
    assert json.loads((run_dir / "status.json").read_text())["state"] == "complete"

    summary = json.loads((run_dir / "summary.json").read_text())
    records = summary["records"]
    assert records["missing"] == 0 and records["expected"] > 0, records
    assert records["duplicates"] == records["unexpected"] == records["wrong_values"] == 0, records
    assert summary["trusted"] is True

    # every malformed record the publisher sent (over the whole run) is one the evaluator
    # read and classified as the same kind, and one the job counted and dropped
    sent = json.loads((run_dir / "publisher.json").read_text())["malformed"]
    assert set(sent) == set(m.KINDS) and all(n > 0 for n in sent.values()), sent
    assert records["malformed_inputs_by_kind"] == sent
    assert records["malformed_inputs"] == sum(sent.values())
    events = [json.loads(line) for line in (run_dir / "engine_progress.jsonl").open()]
    counted = sum(
        e["observedMetrics"]["parse"]["malformed"]
        for e in events
        if e["event"] == "progress" and "parse" in e.get("observedMetrics", {})
    )
    assert counted == sum(sent.values())

    # the job ran through: one start, no query that ended with an error
    assert sum(e["event"] == "started" for e in events) == 1
    assert not [e for e in events if e["event"] == "terminated" and e.get("exception")]
    assert "oversized" in (run_dir / "report.md").read_text()
    assert not _job_pids(results)
