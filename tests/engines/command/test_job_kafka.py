"""A user's job as an engine: docs/examples' jobs measured on a real broker, exactly as a
user runs them; a job that names wrong inputs is not trusted; nothing of a job outlives
its run."""

import json
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ground.kafka.broker import EmbeddedBroker

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "docs" / "examples"

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedded_bootstrap(tmp_path_factory) -> Iterator[str]:
    """The embedded broker, beside the tests' own Kafka (a container in CI)."""
    with EmbeddedBroker(home=tmp_path_factory.mktemp("embedded")) as state:
        yield state.bootstrap


@pytest.fixture(params=["tests' kafka", "embedded"])
def bootstrap(request, kafka_bootstrap) -> str:
    if request.param == "embedded":
        return str(request.getfixturevalue("embedded_bootstrap"))
    return kafka_bootstrap


def _run(bootstrap: str, results: Path, job: str, *args: str, exit_code: int = 0) -> dict:
    """``stagebench run --job JOB ARGS``, which exits with ``exit_code``: its summary.json."""
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "run", "--job", job, "--bootstrap", bootstrap,
         "--results", str(results), *args],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == exit_code, done.stdout[-3000:] + done.stderr[-3000:]
    (summary,) = results.glob("*/summary.json")
    return json.loads(summary.read_text())


def _copied(directory: Path, name: str, text: str) -> Path:
    """A job of ``text`` at ``directory/name``, beside a copy of the module it imports."""
    (directory / "kafka_config.py").write_text((EXAMPLES / "kafka_config.py").read_text())
    (directory / name).write_text(text)
    return directory / name


def _python_job(path: Path = EXAMPLES / "python_job.py") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def test_the_python_example_is_measured_and_trusted(bootstrap, tmp_path):
    summary = _run(bootstrap, tmp_path, _python_job(), "--duration", "10", "--warmup", "5")
    assert summary["trusted"] is True, summary["warnings"]
    assert (summary["run"]["stage"], summary["run"]["engine"]) == ("job", "command")
    records = summary["records"]
    # the filter passes the speed observations and drops the flow ones: half the inputs
    assert records["outputs"] > 1000 and records["unexpected"] == 0
    assert records["unreferenced_inputs"] == pytest.approx(records["inputs_measured"] / 2, rel=0.1)
    assert 0 <= summary["latency_ms"]["p50"] < 100
    assert summary["metadata"]["resources"]["engine"]["cpu_percent_mean"] > 0


@pytest.mark.spark
def test_the_pyspark_example_is_measured_and_trusted(kafka_bootstrap, tmp_path):
    """On the tests' Kafka only: the Python example runs on both brokers, and this job reads
    the same variables as that one."""
    job = f"{shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLES / 'pyspark_job.py'))}"
    summary = _run(
        kafka_bootstrap, tmp_path, job, "--duration", "15", "--warmup", "15", "--tail", "3"
    )
    assert summary["trusted"] is True, summary["warnings"]
    records = summary["records"]
    # one output a location-second, naming the latest of its observations
    assert records["outputs"] > 100 and records["unexpected"] == 0
    assert records["unreferenced_inputs"] > records["outputs"]
    assert 500 < summary["latency_ms"]["p50"] < 10_000


def test_a_job_that_names_inputs_of_no_run_is_not_trusted(kafka_bootstrap, tmp_path):
    text = (EXAMPLES / "python_job.py").read_text()
    broken = _copied(
        tmp_path,
        "broken_job.py",
        text.replace('"source_offset": msg.offset()', '"source_offset": msg.offset() + 10**9'),
    )
    summary = _run(kafka_bootstrap, tmp_path / "results", _python_job(broken),
                   "--duration", "5", "--warmup", "2", exit_code=1)  # fmt: skip
    assert summary["trusted"] is False
    assert summary["records"]["unexpected"] == summary["records"]["outputs"] > 0
    assert any("explained by no input" in w for w in summary["warnings"])


def test_a_job_that_writes_nothing_fails_the_run_and_says_why(kafka_bootstrap, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "run", "--job", "sleep 600", "--bootstrap",
         kafka_bootstrap, "--results", str(tmp_path), "--duration", "30", "--config",
         str(_config(tmp_path, "[engine.command]\nfirst_output_s = 3\n"))],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert "your job wrote nothing to" in done.stderr and "within 3 s" in done.stderr
    assert not _processes("sleep 600")


def test_a_job_whose_shell_exits_leaves_none_of_its_processes(kafka_bootstrap, tmp_path, unique):
    """The shell exits at once; the process it started left its session (``setsid``) and
    keeps running: the run fails, saying the job exited, and stops that process too."""
    mark = f"orphan-{unique}"
    keeps = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(600)' {mark}"
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "run", "--job", f"setsid {keeps} & sleep 1",
         "--bootstrap", kafka_bootstrap, "--results", str(tmp_path), "--duration", "10"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    try:
        assert done.returncode != 0
        assert "your job exited with code 0" in done.stdout + done.stderr
        assert not _processes(mark)
    finally:
        for proc in _processes(mark):
            proc.kill()


def test_no_process_of_a_job_outlives_a_sigterm_to_stagebench(kafka_bootstrap, tmp_path):
    job = _copied(tmp_path, "my_job.py", (EXAMPLES / "python_job.py").read_text())
    results = tmp_path / "results"
    bench = subprocess.Popen(
        [sys.executable, "-m", "stagebench", "run", "--job", _python_job(job), "--duration",
         "120", "--bootstrap", kafka_bootstrap, "--results", str(results)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _processes(str(job), bench.pid) or not list(results.glob("*/pipeline.ready")):
            assert bench.poll() is None and time.monotonic() < deadline
            time.sleep(0.5)
        time.sleep(3)  # mid-run: publishing, the job writing
        bench.send_signal(signal.SIGTERM)
        bench.wait(90)
        assert not _processes(str(job)) and not _processes("engines.command.job")
    finally:
        if bench.poll() is None:
            bench.kill()
        for proc in _processes(str(job)):
            proc.kill()


def _processes(mark: str, besides: int | None = None) -> list[psutil.Process]:
    """Live processes whose command line holds ``mark`` (``besides``: but this one)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if mark in cmdline and proc.info["status"] != "zombie" and proc.pid != besides:
            found.append(proc)
    return found


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(text)
    return path
