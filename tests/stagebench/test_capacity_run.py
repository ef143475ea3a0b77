"""A real capacity search, short and bounded, through the real CLI."""

import json
from pathlib import Path

import pytest

from tests.stagebench.test_runs import stagebench

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]


def test_a_short_search_on_ingest_writes_every_probe_and_the_answer(kafka_bootstrap, tmp_path):
    # two probes: 300 msg/s, then the highest allowed, 600; ingest sustains both here
    result = stagebench(
        "capacity", "--stage", "ingest", "--from", "300", "--max", "600", "--precision", "0.5",
        "--duration", "10", "--warmup", "10", "--tail", "3", "--budget", "10m",
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = next(tmp_path.glob("*-capacity-ingest-*"))
    doc = json.loads((out / "capacity.json").read_text())
    assert (doc["stage"], doc["impl"], doc["precision"]) == ("ingest", "builtin", 0.5)
    rates = [p["rate"] for p in doc["probes"]]
    assert rates[:2] == [300, 600]
    assert doc["stopped"] == "max-rate" and doc["sustainable_mps"] == 600, doc
    for probe in doc["probes"]:
        run_dir = Path(probe["run_dir"])
        assert run_dir.parent == out and (run_dir / "summary.json").exists()
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["run"]["rate"] == probe["rate"]
        assert summary["run"]["workload"] == "latency"
        assert probe["p50"] == summary["latency_ms"]["p50"] and probe["engine_cpu_pct"] > 0
    assert doc["sustainable_mps_per_core"] > 0 and doc["machine"]["cores"] >= 1
    assert (out / "capacity.png").exists()
    assert "| 600 | sustainable |" in (out / "capacity.md").read_text()
    assert "600 msg/s sustainable" in result.stdout
