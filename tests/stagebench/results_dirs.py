"""Results directories made up in a test, in the shapes a real run, suite and capacity
search write (summary.json, timeseries.csv, latencies.parquet, resources.csv,
config.json; comparison.json and capacity.json), so report.html can be drawn and opened
without Kafka or Spark.

The per-second series and the statistics come from the evaluator's own functions on the
made-up latencies, and a suite's comparison.json from the real suite flow with its runs
replaced, so the files agree with each other as a real run's do.
"""

import dataclasses
import io
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from engines.config import PipelineConfig
from evaluator.config import EvaluatorConfig
from evaluator.files import hdrlog
from evaluator.statistics.stats import describe, timeseries
from ground import rundir
from publisher.config import PublisherConfig
from stagebench.config.layers import Settings
from stagebench.config.settings import RunConfig
from stagebench.console import Console
from stagebench.suite import rounds as suite
from tests.evaluator.summaries import made_summary, summary_doc

START_MS = 1_795_706_610_000
"""Start of every made-up run's measured period (broker clock)."""
WARMUP_S, MEASURED_S, TAIL_S, RATE = 20, 40, 5, 200
FAULT_AT_S, FAULT_S = 10, 5
P50_MS = {"floor": 2.0, "ingest": 30.0, "parse": 40.0, "join": 230.0, "tumbling": 3000.0}


def latencies(stage: str, fault: bool, seed: int) -> pd.DataFrame:
    """latencies.parquet's rows: one output per input pair, every 10 ms from the warm-up
    to the tail; in a fault the outputs wait for the broker to come back."""
    rng = np.random.default_rng(seed)
    latest = np.arange(START_MS - WARMUP_S * 1000, START_MS + (MEASURED_S + TAIL_S) * 1000, 10)
    lat = np.round(P50_MS[stage] * rng.lognormal(0.0, 0.35, latest.size)).astype(np.int64)
    warming = latest < START_MS
    lat[warming] += ((START_MS - latest[warming]) * P50_MS[stage] / 10_000).astype(np.int64)
    if fault:
        down, up = START_MS + FAULT_AT_S * 1000, START_MS + (FAULT_AT_S + FAULT_S) * 1000
        held = (latest >= down) & (latest < up)
        lat[held] += up - latest[held]
    n = latest.size
    return pd.DataFrame({
        "partition": np.zeros(n, np.int32), "offset": np.arange(n, dtype=np.int64),
        "timestamp": latest + lat, "input_ts_latest": latest, "input_ts_earliest": latest - 3,
        "input_count": np.full(n, 2, np.int64),
        "location_id": pd.Categorical(rng.choice(["RWS01_MONIBAS_0021hrl0403", "GEO0B_R_RWSTI3"],
                                                 n)),
        "lane": rng.integers(1, 6, n), "observation_ts": latest - 60_000,
        "speed": rng.uniform(60, 120, n), "flow": rng.uniform(0, 3000, n),
        "topic": pd.Categorical(np.full(n, "stagebench-out")),
        "latency_ms": lat, "latency_earliest_ms": lat + 3,
        "in_range": (latest >= START_MS) & (latest <= START_MS + MEASURED_S * 1000),
        "explained": np.ones(n, bool),
    })  # fmt: skip


def config(stage: str, run_id: str, fault: bool) -> dict:
    """config.json: every concern's effective values and the sources of those set."""
    run = RunConfig(stage=stage, rate=RATE, duration_s=MEASURED_S, warmup_s=WARMUP_S,
                    tail_s=TAIL_S, fault="broker-kill" if fault else None)  # fmt: skip
    pipeline = PipelineConfig(stage=stage, output_topic=f"stagebench-{run_id}-out",
                              run_id=run_id, bootstrap="127.0.0.1:9092",
                              checkpoint_dir="checkpoint")  # fmt: skip
    given = {"rate": "command line", "duration_s": "command line", "stage": "command line"}
    pipeline_doc = dataclasses.asdict(pipeline)
    engine = pipeline_doc.pop("settings")
    return {
        "run": dataclasses.asdict(run),
        "publisher": dataclasses.asdict(PublisherConfig(rate=RATE)),
        "pipeline": pipeline_doc,
        **({"engine.spark": engine} if engine is not None else {}),
        "evaluator": dataclasses.asdict(EvaluatorConfig()),
        "sources": {"run": given, "publisher": {}, "pipeline": {}, "evaluator": {}},
    }


def resources() -> pd.DataFrame:
    """resources.csv: a sample a second of each process, the machine and the rest."""
    rows = []
    for i, t in enumerate(range(START_MS - 30_000, START_MS + 50_000, 1000)):
        for process, cpu, rss, heap in (("engine", 110.0, 1200.0, 300.0),
                                        ("broker", 20.0, 450.0, 230.0),
                                        ("bench", 4.0, 260.0, None)):  # fmt: skip
            rows.append({"time_ms": t, "process": process, "cpu_percent": cpu + i % 7,
                         "rss_mb": rss + i, "heap_used_mb": heap})  # fmt: skip
        rows.append({"time_ms": t, "process": "machine", "cpu_percent": 150.0 + i % 11,
                     "cpu_user": 120.0, "cpu_system": 30.0, "cpu_iowait": 0.1,
                     "cpu_steal": 0.0})  # fmt: skip
        rows.append({"time_ms": t, "process": "outside", "cpu_percent": 12.0 + i % 5})
    columns = ["time_ms", "process", "cpu_percent", "rss_mb", "heap_used_mb", "cpu_user",
               "cpu_system", "cpu_iowait", "cpu_steal"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def summary(stage: str, run_id: str, frame: pd.DataFrame, fault: bool) -> dict:
    measured = frame[frame["in_range"] & frame["explained"]]
    lat = describe(measured["latency_ms"].to_numpy())
    p50, p99 = lat["p50"], lat["p99"]
    end_ms = START_MS + MEASURED_S * 1000
    usage = {"engine": {"samples": 80, "cpu_percent_mean": 113.0, "cpu_percent_max": 116.0,
                        "rss_mb_mean": 1240.0, "rss_mb_max": 1279.0, "heap_used_mb_mean": 300.0,
                        "heap_used_mb_max": 300.0},
             "broker": {"samples": 80, "cpu_percent_mean": 23.0, "cpu_percent_max": 26.0,
                        "rss_mb_mean": 490.0, "rss_mb_max": 529.0, "heap_used_mb_mean": 230.0,
                        "heap_used_mb_max": 230.0}}  # fmt: skip
    machine = {"cores": 2, "samples": 80, "cpu_total_pct_mean": 155.0, "cpu_total_pct_max": 160.0,
               "cpu_outside_run_pct_mean": 14.0, "cpu_outside_run_pct_max": 16.0,
               "steal_pct_mean": 0.0, "iowait_pct_mean": 0.1, "saturated_share": 0.05,
               "pace": {"before_ms": 13.3, "after_ms": 13.1, "change": -0.015,
                        "work": "fastest of 7: a 200,000-step Python loop and a 32 MiB copy on "
                                "one core"},
               "broker": {"kind": "embedded", "containers": [], "images": [],
                          "cpu_percent_mean": 23.0, "rss_mb_max": 529.0}}  # fmt: skip
    down, up = START_MS + FAULT_AT_S * 1000, START_MS + (FAULT_AT_S + FAULT_S) * 1000
    recovery = {"baseline_window_s": 20.0, "threshold": 0.2, "hold_s": 3, "windows": [
        {"kind": "broker-kill", "start_ms": down, "end_ms": up, "baseline_p50_ms": p50,
         "peak_ms": 5000.0, "first_output_after_s": 0.0, "recovery_s": 2.0, "recovered": True}],
        "summary": {"windows": 1, "recovered": 1, "not_recovered": 0, "no_baseline": 0,
                    "recovery_s_median": 2.0, "recovery_s_max": 2.0, "peak_ms_median": 5000.0,
                    "peak_ms_max": 5000.0}}  # fmt: skip
    warmup = {"mode": "fixed", "seconds": float(WARMUP_S), "settled": None}
    warnings = ["not steady: per-second p50 falling by -30 ms/min (95 % interval -40 to -20): "
                "still warming up; measure longer or warm up longer"] if fault else []  # fmt: skip
    return summary_doc(**{
        "run": {"id": run_id, "stage": stage, "impl": "builtin", "workload": "latency",
                "engine": "floor" if stage == "floor" else "spark",
                "rate": float(RATE), "duration_s": float(MEASURED_S), "bootstrap": "127.0.0.1:9092",
                "input_topics": [f"stagebench-{run_id}-speed", f"stagebench-{run_id}-flow"],
                "output_topic": f"stagebench-{run_id}-out", "start_ms": START_MS,
                "end_ms": end_ms},
        "versions": {"stagebench": "0.1.0", "pyspark": "4.3.0", "kafka_broker": "4.3.1"},
        "config": config(stage, run_id, fault),
        "metadata": {"resources": {**usage, "machine": machine}, "machine": machine,
                     "warmup": warmup, "faults": [], "warnings": []},
        "period": {"start_ms": START_MS, "end_ms": end_ms, "measured_from_ms": START_MS,
                   "measured_to_ms": end_ms, "warmup_ms": 0, "end_cut_ms": 0},
        "latency_ms": lat,
        "latency_earliest_ms": describe(measured["latency_earliest_ms"].to_numpy()),
        "records": {"outputs": len(measured), "duplicates": 0, "expected": len(measured),
                    "missing": 0, "negative": 0, "outside_window": len(frame) - len(measured)},
        "missing": None, "wrong": {}, "trusted": True,
        "throughput": {"input_mps": float(RATE), "output_mps": RATE / 2, "seconds": 40.0,
                       "peak_output_mps": 500, "first_output_delay_ms": 3968, "drain_ms": 1185},
        "steady_state": {"slope_ms_per_min": -30.0 if fault else 0.5, "ci95": [-40.0, -20.0]
                         if fault else [-1.0, 2.0], "median_ms": p50, "seconds": 40,
                         "verdict": "falling" if fault else "steady"},
        "confidence": {"level": 0.95, "sections": 4, "p50": [p50 * 0.97, p50 * 1.03],
                       "p99": [p99 * 0.9, p99 * 1.1]},
        "recovery": recovery if fault else None,
        "warmup": warmup, "machine": machine,
        "evaluation": {"engine": "pandas",
                       "percentile_method": "numpy.percentile method='linear' on all values"},
        "warnings": warnings,
    })  # fmt: skip


def make_run(parent: Path, stage: str, run_id: str, fault: bool = False, seed: int = 0) -> Path:
    """An evaluated run directory of ``stage`` under ``parent``."""
    run_dir = parent / f"20261126T152238Z-{stage}-{run_id}"
    run_dir.mkdir(parents=True)
    frame = latencies(stage, fault, seed)
    frame.to_parquet(run_dir / rundir.LATENCIES, index=False)
    explained = frame[frame["explained"]]
    inputs = np.repeat(frame["input_ts_latest"].to_numpy(), 2)
    timeseries(explained["timestamp"].to_numpy(), explained["latency_ms"].to_numpy(),
               inputs).to_csv(run_dir / rundir.TIMESERIES, index=False)  # fmt: skip
    resources().to_csv(run_dir / rundir.RESOURCES, index=False)
    doc = summary(stage, run_id, frame, fault)
    (run_dir / rundir.CONFIG).write_text(json.dumps(doc["config"], indent=2))
    (run_dir / rundir.SUMMARY).write_text(json.dumps(doc, indent=2))
    hdrlog.write(run_dir / rundir.LATENCY_HLOG, *hdrlog.measured(run_dir / rundir.LATENCIES),
                 f"run {run_id}")  # fmt: skip
    return run_dir


def make_suite(results: Path, stages: list[str], repeat: int, monkeypatch) -> Path:
    """A suite directory written by the real suite flow (comparison.json, comparison.md,
    report.html) over made-up runs beside it, as a suite writes its runs."""
    made = []

    def execute(run, settings, console, application=None):
        made.append(run.stage)
        run_dir = make_run(results, run.stage, f"{len(made):08x}", seed=len(made))
        doc = json.loads((run_dir / rundir.SUMMARY).read_text())
        # the flow reads only whether the run is complete
        summary = made_summary(records=doc["records"], trusted=doc["trusted"])
        return SimpleNamespace(run_dir=run_dir, summary=summary)

    monkeypatch.setattr(suite, "execute", execute)
    ladder = [(s, "builtin") for s in stages]
    # the golden comparisons were written with a 5 s tail
    config = RunConfig(results_dir=str(results), application="per-run", rate=RATE, tail_s=5.0)
    return suite.run_suite(ladder, repeat, config, Settings(), Console(io.StringIO()),
                           seed=5).suite_dir  # fmt: skip


FIT = {"capacity_mps": 282.8, "capacity_ci95_mps": [193.2, 414.1], "pass90_mps": 256.8,
       "pass90_ci95_mps": [162.7, 379.7], "pass_curve": {"intercept": 167.4048,
       "slope": -29.656, "probes": 2, "prior_half_width": [0.02, 0.3]}}  # fmt: skip
"""The pass curve fitted to make_capacity's two probes."""


def make_capacity(results: Path, fitted: bool = False) -> Path:
    """A capacity search's directory: capacity.json and one probe run inside it; with
    ``fitted``, the pass curve fitted to its probes (:data:`FIT`)."""
    out = results / "20261126T160000Z-capacity-join-0c0ffee0"
    out.mkdir(parents=True)
    at = make_run(out, "join", "000000a1", seed=1)
    above = make_run(out, "join", "000000a2", fault=True, seed=2)
    probes = [
        {"rate": 200.0, "sustainable": True, "reasons": [], "publisher_bound": False,
         "p50": 230.0, "p99": 500.0, "engine_cpu_pct": 110.0, "run_dir": str(at),
         "seconds": 90.0, "verdict": "sustainable"},
        {"rate": 400.0, "sustainable": False, "reasons": ["p50 rising by 300 ms/min"],
         "publisher_bound": False, "p50": 900.0, "p99": 5000.0, "engine_cpu_pct": 190.0,
         "run_dir": str(above), "seconds": 90.0, "verdict": "unsustainable"},
    ]  # fmt: skip
    doc = {
        "stage": "join", "impl": "builtin", "capacity_mps": None, "capacity_ci95_mps": None,
        "pass90_mps": None, "pass90_ci95_mps": None, "pass_curve": None,
        "sustainable_mps": 200.0, "first_unsustainable_mps": 400.0, "publisher_limit_mps": None,
        "precision": 0.1, "bracket_width": 1.0, "stopped": "budget",
        "engine_cores_used": 1.1, "sustainable_mps_per_core": 181.8,
        "criteria": {"max_p50_ms": 10000.0, "max_drain_s": 10.0, "max_engine_cpu_pct": None},
        "seconds": 180.0, "probes": probes, "machine": {"cores": 2}, "versions": {},
        "dir": str(out), "growth": 2.0, **(FIT if fitted else {}),
    }  # fmt: skip
    (out / rundir.CAPACITY).write_text(json.dumps(doc, indent=2))
    return out
