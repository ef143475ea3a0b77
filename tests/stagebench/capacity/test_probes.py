"""A real capacity search, short and bounded, through the real CLI, its probes in a shared
Spark application (``--application shared``)."""

import json
from pathlib import Path

import pytest

from tests.stagebench.run.test_runs import stagebench

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]

VERDICTS = {"sustainable", "unsustainable", "publisher-bound"}


def test_a_short_search_on_ingest_writes_every_probe_and_the_answer(kafka_bootstrap, tmp_path):
    # exactly one probe, at 300 msg/s, whatever its verdict: the first probe always runs,
    # and a 1 s budget leaves no room for the next one, which the search wants either way
    # (600 msg/s after a sustainable probe, 150 after an unsustainable one);
    # the search (growth, bisection, the fit) is unit-tested in test_capacity.py
    result = stagebench(
        "capacity", "--stage", "ingest", "--from", "300", "--max", "600", "--precision", "0.5",
        "--duration", "10", "--lead-in", "5", "--warmup", "5", "--tail", "3", "--budget", "1s",
        "--max-drain", "7", "--application", "shared", "--app-warmup", "5",
        "--bootstrap", kafka_bootstrap, "--results", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    out = next(tmp_path.glob("*-capacity-ingest-*"))
    doc = json.loads((out / "capacity.json").read_text())
    assert (doc["stage"], doc["impl"], doc["precision"]) == ("ingest", "builtin", 0.5)
    assert doc["growth"] == 2
    assert doc["stopped"] == "budget" and "the budget ran out" in result.stdout
    assert [p["rate"] for p in doc["probes"]] == [300]
    # every probe counts once: the bracket's top is the probe when it failed
    [probe] = doc["probes"]
    assert doc["first_unsustainable_mps"] == (None if probe["sustainable"] else 300)
    assert doc["machine"]["cores"] >= 1 and doc["criteria"]["max_drain_s"] == 7
    # a probe waits for its drain 10 s beyond what the criterion allows, not 60 s
    assert doc["probe"]["drain_timeout_s"] == 17
    # the probes ran in one Spark application, warmed up first at the first probe's rate
    warmed = doc["probe"]["application"]
    assert (warmed["stages"], warmed["rate"], warmed["seconds"]) == (["ingest/builtin"], 300, 5)
    assert (out / "application").is_dir()
    for probe in doc["probes"]:
        assert probe["verdict"] in VERDICTS
        assert probe["sustainable"] == (probe["verdict"] == "sustainable")
        assert bool(probe["reasons"]) != probe["sustainable"], probe
        run_dir = Path(probe["run_dir"])
        assert run_dir.parent == out and (run_dir / "summary.json").exists()
        summary = json.loads((run_dir / "summary.json").read_text())
        assert (summary["run"]["rate"], summary["run"]["workload"]) == (probe["rate"], "latency")
        assert summary["run"]["duration_s"] == 10 and summary["warmup"]["lead_in_s"] == 5
        assert summary["config"]["run"]["drain_timeout_s"] == 17
        assert (summary["warmup"]["mode"], summary["warmup"]["seconds"]) == ("fixed", 5)
        assert summary["warmup"]["application"]["shared"] is True
        assert probe["p50"] == summary["latency_ms"]["p50"] and probe["engine_cpu_pct"] > 0
        # an ingest input is read for its schedule alone: on one host, sends are never early
        intended = summary["latency_intended"]
        assert probe["p99_intended"] == intended["latency_ms"]["p99"] >= probe["p99"]
        assert intended["send_delay_ms"]["min"] >= 0 and intended["same_clock"] is True
        # the evaluation read the topics from 10 s before the measured period on
        read_from = summary["evaluation"]["from_ms"]
        assert read_from == summary["period"]["measured_from_ms"] - 10_000
    sustainable = [p["rate"] for p in doc["probes"] if p["sustainable"]]
    assert doc["sustainable_mps"] == (max(sustainable) if sustainable else None)
    if doc["sustainable_mps"]:
        assert doc["sustainable_mps_per_core"] > 0
        assert f"{doc['sustainable_mps']:,.0f} msg/s sustainable" in result.stdout
    table = (out / "capacity.md").read_text()
    assert (out / "report.html").exists() and "[report.html](report.html)" in table
    assert doc["probe"]["lead_in_s"] == 5 and "5 s at half the rate" in table
    assert doc["probe"]["warmup_s"] == 5 and "a warm-up (5 s)" in table
    assert "given 17 s to drain" in table
    assert "The probes ran as queries of one Spark application, warmed up first" in table
    assert all(f"| {p['rate']:,.0f} | {p['verdict']} |" in table for p in doc["probes"])
