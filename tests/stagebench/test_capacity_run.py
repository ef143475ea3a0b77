"""A real capacity search, short and bounded, through the real CLI."""

import json
from pathlib import Path

import pytest

from tests.stagebench.test_runs import stagebench

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]

VERDICTS = {"sustainable", "unsustainable", "publisher-bound"}
STOPS = {"converged", "max-rate", "publisher-bound", "nothing-sustainable", "budget"}


def test_a_short_search_on_ingest_writes_every_probe_and_the_answer(kafka_bootstrap, tmp_path):
    # from 300 to at most 600 msg/s, three minutes: two probes on a quiet machine (ingest
    # sustains both), more on a busy one; what each probe is judged is the machine's
    result = stagebench(
        "capacity", "--stage", "ingest", "--from", "300", "--max", "600", "--precision", "0.5",
        "--duration", "10", "--lead-in", "5", "--warmup", "10", "--tail", "3", "--budget", "3m",
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = next(tmp_path.glob("*-capacity-ingest-*"))
    doc = json.loads((out / "capacity.json").read_text())
    assert (doc["stage"], doc["impl"], doc["precision"]) == ("ingest", "builtin", 0.5)
    assert doc["stopped"] in STOPS, doc["stopped"]
    assert doc["probes"] and doc["probes"][0]["rate"] == 300
    assert doc["machine"]["cores"] >= 1 and doc["criteria"]["max_drain_s"] == 10
    for probe in doc["probes"]:
        assert probe["verdict"] in VERDICTS
        assert probe["sustainable"] == (probe["verdict"] == "sustainable")
        assert bool(probe["reasons"]) != probe["sustainable"], probe
        run_dir = Path(probe["run_dir"])
        assert run_dir.parent == out and (run_dir / "summary.json").exists()
        summary = json.loads((run_dir / "summary.json").read_text())
        assert (summary["run"]["rate"], summary["run"]["workload"]) == (probe["rate"], "latency")
        assert summary["run"]["duration_s"] == 10 and summary["warmup"]["lead_in_s"] == 5
        assert probe["p50"] == summary["latency_ms"]["p50"] and probe["engine_cpu_pct"] > 0
    sustainable = [p["rate"] for p in doc["probes"] if p["sustainable"]]
    assert doc["sustainable_mps"] == (max(sustainable) if sustainable else None)
    if doc["sustainable_mps"]:
        assert doc["sustainable_mps_per_core"] > 0
        assert f"{doc['sustainable_mps']:,.0f} msg/s sustainable" in result.stdout
    assert (out / "capacity.png").exists()
    table = (out / "capacity.md").read_text()
    assert doc["probe"]["lead_in_s"] == 5 and "5 s at half the rate" in table
    assert all(f"| {p['rate']:,.0f} | {p['verdict']} |" in table for p in doc["probes"])
