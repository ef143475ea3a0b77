"""Shared fixtures: a real Kafka 4 broker, an embedded three-broker cluster, unique
names, one SparkSession, a local Spark standalone cluster.

Kafka, in order: ``KAFKA_BOOTSTRAP_SERVERS`` if set, else a testcontainers
Kafka (``STAGEBENCH_KAFKA_IMAGE``, compose's settings) when a Docker engine
answers and has the image, else the embedded broker in a temporary home
(:mod:`tests.kafka_docker`). Tests marked ``docker`` need the engine and the image.
"""

import contextlib
import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ground import envvars
from ground.kafka.ports import free_port
from tests.kafka_docker import (
    docker_client,
    image_missing,
    kafka_for_tests,
    kafka_image,
    remove_session_containers,
)
from tests.leaks import canary_properties

log = logging.getLogger(__name__)


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> Iterator[str]:
    with kafka_for_tests(tmp_path_factory.mktemp("broker")) as kafka:
        yield kafka.bootstrap


@pytest.fixture(scope="module")
def kafka_canary(tmp_path_factory) -> Iterator[str]:
    """A password that every process the module starts is given, in a
    ``STAGEBENCH_KAFKA_PROPERTIES`` file on PLAINTEXT that carries SASL credentials
    (:func:`tests.leaks.canary_properties`), and that none may write anywhere."""
    path, canary = canary_properties(tmp_path_factory.mktemp("properties"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(envvars.KAFKA_PROPERTIES, str(path))
        yield canary


def _docker_unavailable(why: str) -> None:
    """Skip, saying why, where Docker cannot be had; fail where it is required (CI)."""
    hint = f"{why}: start one, or run ../shared/docker/offline-setup.sh where no registry answers"
    if os.environ.get(envvars.TEST_DOCKER) == "required":
        pytest.fail(f"{envvars.TEST_DOCKER}=required, but {hint}")
    pytest.skip(hint)


@pytest.fixture(scope="session")
def docker_engine():
    """A client of the Docker engine, for tests marked ``docker``."""
    client = docker_client()
    if client is None:
        _docker_unavailable("no Docker engine answers")
    return client


@pytest.fixture(scope="session")
def docker_kafka_image(docker_engine) -> str:
    """The Kafka image (``STAGEBENCH_KAFKA_IMAGE``), once the engine has it."""
    image = kafka_image()
    if why := image_missing(docker_engine, image):
        _docker_unavailable(why)
    return image


def pytest_sessionfinish(session):
    if removed := remove_session_containers():
        log.warning("removed containers the tests left behind: %s", ", ".join(removed))


@pytest.fixture(scope="module")
def kafka_cluster(tmp_path_factory):
    """An embedded three-broker KRaft cluster (ids 1–3), for the same-leader rule on
    more than one broker: the :class:`~ground.kafka.broker.EmbeddedBroker` that runs
    it, so a test can stop and start one node. Per module: three idle JVMs would
    take a fifth of a core from every later test."""
    from ground.kafka.broker import EmbeddedBroker

    broker = EmbeddedBroker(home=tmp_path_factory.mktemp("cluster"), brokers=3)
    with broker:
        yield broker


STARTED_BY_STAGEBENCH = (
    "engines.spark.job",
    "engines.floor.loop",
    "engines.kafka_streams.job",
    "engines.command.job",
    "_job.py",
    "stagebench",
    "kafka.Kafka",
    "org.apache.spark.",
)
"""What marks a process stagebench (or a test) starts: a job (Spark, the floor, Kafka
Streams, a user's command and docs/examples' ``*_job.py`` it runs), a runner, a broker,
a Spark daemon, driver or executor JVM (their class paths name stagebench's cache or
pyspark), a Kafka Streams JVM (``stagebench.kstreams.Main``)."""
LEFTOVER_GRACE_S = 60.0
"""How long a process may take to end after its test: a job notices its runner's death
through a pipe within seconds, a Spark JVM follows its driver."""


SESSION_MARK = "STAGEBENCH_TEST_SESSION"
"""An environment variable set to a value of this test session's own: every process the
session starts inherits it, so the leftover check never takes (and kills) a process of
another test session running on the same machine, whose command line can name
stagebench as well."""
os.environ[SESSION_MARK] = uuid.uuid4().hex


OUTLIVING: set[int] = set()
"""Pids of processes a fixture starts for a later test (a job started ahead of its
test): they and their children outlive the test that was running, on purpose."""


def _leftovers(since: float, basetemp: str) -> list[psutil.Process]:
    """Processes that a test started and left running: started after ``since``, of
    stagebench's kinds, under this session's temporary directory or a stagebench
    command, of this session (:data:`SESSION_MARK`), and neither this process's own
    children (the session's brokers and its in-process Spark, which outlive single tests
    on purpose) nor :data:`OUTLIVING`."""
    me = os.getpid()
    found = []
    for proc in psutil.process_iter(["cmdline", "create_time", "ppid", "status"]):
        info = proc.info
        cmdline = " ".join(info["cmdline"] or [])
        if (
            info["create_time"] >= since
            and info["ppid"] != me
            and proc.pid != me
            and info["status"] != psutil.STATUS_ZOMBIE
            and any(mark in cmdline for mark in STARTED_BY_STAGEBENCH)
            and (basetemp in cmdline or "stagebench" in cmdline)
            and _of_this_session(proc)
            and not _outliving(proc)
        ):
            found.append(proc)
    return found


def _of_this_session(proc: psutil.Process) -> bool:
    try:
        return proc.environ().get(SESSION_MARK) == os.environ[SESSION_MARK]
    except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
        return False


def _outliving(proc: psutil.Process) -> bool:
    try:
        return bool(OUTLIVING & {proc.pid, *(p.pid for p in proc.parents())})
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(autouse=True)
def no_process_left_behind(request, tmp_path_factory) -> Iterator[None]:
    """After every test that starts Kafka or Spark: no broker, job, runner or Spark
    process it started is still running (the leftovers are killed, the test fails)."""
    if not {"integration", "spark"} & {m.name for m in request.node.iter_markers()}:
        yield
        return
    since = time.time() - 1
    yield
    basetemp = str(tmp_path_factory.getbasetemp())
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    while (left := _leftovers(since, basetemp)) and time.monotonic() < deadline:
        time.sleep(1)
    if not left:
        return
    described = [" ".join(p.cmdline())[:160] for p in left if p.is_running()]
    for proc in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    pytest.fail(f"processes left running after the test: {described}")


@pytest.fixture
def unique() -> str:
    """A short unique string for topic names and run ids."""
    return uuid.uuid4().hex[:10]


@pytest.fixture(scope="session")
def spark():
    from engines.spark.session import build_session

    yield build_session(
        "stagebench-tests",
        master="local[2]",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        },
    )
    stop_in_process_spark()


def _in_process_spark(item: pytest.Item) -> bool:
    """Does the test run Spark in this process's JVM (the ``spark`` fixture)?"""
    return "spark" in getattr(item, "fixturenames", ())


SERIAL = ("integration", "spark", "docker", "browser", "slow")
"""The markers of tests that start Kafka, an engine, Docker or a browser: under
pytest-xdist they run one after another on one worker, as without it, since two such
tests at once on two cores slow each other's runs past what their checks allow; the
tests that start none of them run beside them, on the other worker."""


def serial(item: pytest.Item) -> bool:
    """Does the test start Kafka, an engine, Docker or a browser (:data:`SERIAL`)?"""
    fixtures = getattr(item, "fixturenames", ())
    return (
        "kafka_bootstrap" in fixtures
        or "spark" in fixtures
        or any(item.get_closest_marker(name) for name in SERIAL)
    )


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Modules whose tests run Spark in this process go first, whole (their module
    fixtures stay set up once), and that JVM stops after the last of them: left idle it
    took about a tenth of a core and 2 GB from every run measured after it, counted
    there as other processes. Under pytest-xdist (``-n 2 --dist loadgroup``)
    the tests of :data:`SERIAL` share one worker, in this order."""
    in_process = {item.module for item in items if _in_process_spark(item)}
    items.sort(key=lambda item: item.module not in in_process)  # stable: order kept
    last = [item for item in items if _in_process_spark(item)][-1:]
    config.stash[_LAST_IN_PROCESS_SPARK] = last[0] if last else None
    for item in items:
        if serial(item):
            item.add_marker(pytest.mark.xdist_group("serial"))


_LAST_IN_PROCESS_SPARK = pytest.StashKey[pytest.Item | None]()


def pytest_runtest_teardown(item, nextitem):
    if item is item.config.stash.get(_LAST_IN_PROCESS_SPARK, None):
        stop_in_process_spark()


def stop_in_process_spark() -> None:
    """Stop this process's SparkSession and its JVM (PySpark keeps the JVM for the
    next session otherwise); a later session starts a new one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if (session := SparkSession.getActiveSession()) is not None:
        session.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    with contextlib.suppress(Exception):
        gateway.shutdown()
    if (proc := getattr(gateway, "proc", None)) is not None:
        # the gateway server exits when its stdin closes
        with contextlib.suppress(Exception):
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    SparkContext._gateway = SparkContext._jvm = None


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "a Spark daemon exited while starting"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s")


@pytest.fixture
def standalone_master(tmp_path) -> Iterator[tuple[str, Path]]:
    """(spark://host:port, worker dir) of a fresh master with one 2-core worker."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    port, worker_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "spark-logs"
    logs.mkdir()
    daemons = []
    try:
        master = subprocess.Popen(
            [str(_spark_class()), "org.apache.spark.deploy.master.Master",
             "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port())],
            env=env, stdout=(logs / "master.log").open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        daemons.append(master)
        _wait_for_port(port, master)
        worker = subprocess.Popen(
            [str(_spark_class()), "org.apache.spark.deploy.worker.Worker", master_url,
             "--host", "127.0.0.1", "--port", str(worker_port), "--webui-port",
             str(free_port()), "--cores", "2", "--memory", "2g",
             "--work-dir", str(tmp_path / "work")],
            env=env, stdout=(logs / "worker.log").open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        daemons.append(worker)
        _wait_for_port(worker_port, worker)
        yield master_url, tmp_path / "work"
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()
