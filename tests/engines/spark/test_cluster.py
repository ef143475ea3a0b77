"""A stage on a local Spark standalone cluster gives the same outputs as local mode.

The master and one worker (the ``standalone_master`` fixture) are started from
PySpark's own ``spark-class``; the pipeline command then runs against the cluster,
and its output topic must hold exactly the outputs that local mode writes
(test_job_kafka.py shows those, for the same input, equal to
:func:`~tests.engines.spark.test_job_kafka.expected_values`): the values the input implies,
each once, with its inputs' broker timestamps. A second job in local mode here
would take half a minute to show that again.
"""

import subprocess
import sys
import time

import pytest

from ground.contract import FLOW, INPUT_TS_EARLIEST, INPUT_TS_LATEST, RUN_ID, SPEED
from ground.kafka.topics import create_topics
from tests.engines.spark.test_job_kafka import (
    WAIT_S,
    consume,
    expected_count,
    expected_values,
    identity,
    input_stamps,
    inputs,
    produce,
    read_inputs,
)
from tests.engines.spark.test_transforms import assert_rows_equal

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.slow]

STAGE = "tumbling"


def _run(kafka_bootstrap, topics, output, master, run_dir, want) -> list[dict]:
    command = [
        sys.executable, "-m", "stagebench", "pipeline", "--stage", STAGE,
        "--speed-topic", topics[SPEED], "--flow-topic", topics[FLOW],
        "--output-topic", output, "--run-id", "same", "--run-dir", str(run_dir),
        "--bootstrap", kafka_bootstrap, "--master", master, "--shuffle-partitions", "2",
        # the cluster's executors need memory left on a small machine
        "--conf", "spark.executor.memory=1g",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out = consume(kafka_bootstrap, output, want, time.monotonic() + 2 * WAIT_S)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr[-3000:]
    return [value for _, _, value in out]


def test_standalone_cluster_gives_same_outputs_as_local(
    kafka_bootstrap, unique, tmp_path, standalone_master
):
    topics = {SPEED: f"speed-{unique}", FLOW: f"flow-{unique}"}
    create_topics(kafka_bootstrap, list(topics.values()), partitions=2)
    create_topics(kafka_bootstrap, [f"cluster-{unique}"])
    records = inputs()
    produce(kafka_bootstrap, topics, records)
    want = expected_count(STAGE, records)
    want_in = len(records) + 1  # and the malformed record

    master_url, work_dir = standalone_master
    cluster = _run(kafka_bootstrap, topics, f"cluster-{unique}", master_url, tmp_path / "c", want)

    # what local mode writes: each output once, with the values the input implies
    assert len(cluster) == want
    got = {identity(STAGE, v): v for v in cluster}
    assert len(got) == want, "an output written twice"
    assert_rows_equal(got, expected_values(STAGE, records))
    assert all(v[RUN_ID] == "same" for v in cluster)
    # the broker's clock: each output its inputs' LogAppendTime
    expected = input_stamps(STAGE, read_inputs(kafka_bootstrap, list(topics.values()), want_in))
    assert all((v[INPUT_TS_LATEST], v[INPUT_TS_EARLIEST]) == expected(v) for v in cluster)
    # the cluster's worker really ran the executors (one app directory per application)
    assert [p.name for p in work_dir.iterdir() if p.name.startswith("app-")]
