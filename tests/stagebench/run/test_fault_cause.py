"""A fault's cause is read from the run's resources.csv as the sampler writes it."""

import pytest

from engines import registry
from evaluator.evaluation import read_usage
from ground.errors import EvaluationError
from stagebench.config import faults
from stagebench.resources.sampler import write_csv


def test_the_evaluator_reads_the_samplers_file(tmp_path):
    rows = [
        {"time_ms": 1000, "process": "broker", "cpu_percent": 9.5, "rss_mb": 300.0,
         "heap_used_mb": 120.0, "gc_ms_per_s": 1.0},
        {"time_ms": 1000, "process": "machine", "cpu_percent": 40.0, "cpu_user": 30.0,
         "cpu_system": 10.0, "cpu_iowait": 0.0, "cpu_steal": 0.0},
    ]  # fmt: skip
    write_csv(tmp_path / "resources.csv", rows)
    usage = read_usage(tmp_path / "resources.csv")
    assert usage is not None
    assert usage.to_dict("records")[0] == {
        "time_ms": 1000, "process": "broker", "cpu_percent": 9.5, "gc_ms_per_s": 1.0
    }  # fmt: skip
    assert read_usage(tmp_path / "none.csv") is None
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(EvaluationError, match="not a resources file"):
        read_usage(tmp_path / "bad.csv")


def test_each_fault_names_the_process_it_restarts():
    spark, kafka_streams = registry.engine("spark"), registry.engine("kafka-streams")
    assert [faults.process(kind, spark) for kind in faults.FAULTS[:4]] == [
        "broker", "broker", "engine", None
    ]  # fmt: skip
    assert faults.process("instance-loss", kafka_streams) == "engine"
    assert faults.partial("instance-loss", kafka_streams)
    assert not faults.partial("worker-loss", spark)
