"""The own-job contract of docs/own-pipeline.md kept: docs/examples/stage_job.py, written
from the page alone, is measured as each stage of the ladder it claims, with the page's
command, and trusted with every output there and none malformed."""

import ast
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ground.kafka import client
from tests.conftest import OUTLIVING

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "docs" / "examples"
STAGES = ("ingest", "parse", "join", "tumbling", "tumbling-union", "sliding")
JOB = "python docs/examples/stage_job.py"
"""As the page and the job's docstring write it: run from the work tree's root."""


@pytest.fixture(scope="module")
def runs(kafka_bootstrap, tmp_path_factory) -> Iterator[dict[str, tuple]]:
    """``stagebench run --job JOB --stage S`` for every stage at once (each waits on its
    clock, not on the cores): per stage, its process and its results directory. Each
    outlives the tests before its own (:data:`OUTLIVING`)."""
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    started = {}
    for stage in STAGES:
        results = tmp_path_factory.mktemp(stage)
        proc = subprocess.Popen(
            [sys.executable, "-m", "stagebench", "run", "--job", JOB, "--stage", stage,
             "--bootstrap", kafka_bootstrap, "--results", str(results), "--rate", "200",
             "--warmup", "3", "--duration", "10"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        OUTLIVING.add(proc.pid)
        started[stage] = (proc, results)
    yield started
    for proc, _ in started.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.mark.integration
@pytest.mark.parametrize("stage", STAGES)
def test_a_job_claiming_a_stage_is_trusted_with_every_output(runs, stage):
    proc, results = runs[stage]
    printed, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, printed[-3000:]
    (summary_file,) = results.glob("*/summary.json")
    summary = json.loads(summary_file.read_text())
    assert (summary["run"]["stage"], summary["run"]["engine"]) == (stage, "command")
    assert summary["trusted"] is True, summary["warnings"]
    records = summary["records"]
    assert records["outputs"] > 100, records
    assert records["malformed_outputs"] == records["missing"] == records["duplicates"] == 0
    assert records["expected"] == records["outputs"] and records["wrong_values"] == 0


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}  # fmt: skip
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    return {name.split(".")[0] for name in names}


def test_the_example_jobs_use_no_stagebench_module():
    ours = {"ground", "engines", "evaluator", "publisher", "stagebench"}
    for path in EXAMPLES.glob("*.py"):
        assert not _imports(path) & ours, path.name


@pytest.mark.parametrize(
    "properties",
    [
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="bench" password="p=w:d";\nssl.truststore.type=PEM\n'
        "ssl.truststore.location=/etc/kafka/ca.pem\n",
        "# PLAIN over SASL_PLAINTEXT\nsecurity.protocol = SASL_PLAINTEXT\nsasl.mechanism: PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule \\\n"
        '    required username="bench" password="secret";\n',
    ],
)
def test_the_examples_read_a_secured_cluster_s_properties_as_stagebench_does(properties):
    spec = importlib.util.spec_from_file_location("kafka_config", EXAMPLES / "kafka_config.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    java = client.parse(properties, "client.properties")
    assert example.java_properties(properties) == java
    assert example.librdkafka(java) == client.librdkafka(java)
