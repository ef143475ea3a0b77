"""The embedded broker: a real single-node Apache Kafka (KRaft) on 127.0.0.1.

For machines without Docker and without a Kafka of their own. The official
broker jars are resolved from Maven Central (``ground.jvm.ivy``), storage is
formatted, and ``kafka.Kafka`` runs as a detached JVM in combined
broker+controller mode with ``log.message.timestamp.type=LogAppendTime``.
A state file records it, so later commands (and a second ``start``) reuse the
running broker; a state file whose process is gone is detected and cleaned.
"""

import base64
import contextlib
import fcntl
import json
import logging
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
from confluent_kafka.admin import AdminClient

from ground.errors import BrokerError
from ground.jvm import ivy
from ground.jvm.java import java_executable
from ground.kafka import KAFKA_VERSION
from ground.kafka.ports import LOOPBACK, ensure_free, free_port
from ground.paths import state_dir

log = logging.getLogger(__name__)

LOG4J_VERSION = "2.25.4"
BROKER_ARTIFACTS = [
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    # the official distribution adds the log4j2 binding; the artifact does not depend on it
    f"org.apache.logging.log4j:log4j-slf4j-impl:{LOG4J_VERSION}",
]
NODE_ID = 1
START_TIMEOUT_S = 90.0
START_ATTEMPTS = 3
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class BrokerState:
    """What ``status --json`` prints and later commands read."""

    bootstrap: str
    pid: int
    kafka_version: str
    log_dir: str
    data_dir: str
    home: str
    node_id: int
    started_at: float


def server_properties(port: int, controller_port: int, data_dir: Path) -> str:
    """KRaft combined-mode configuration, as the official single-node default."""
    props = {
        "process.roles": "broker,controller",
        "node.id": NODE_ID,
        "controller.quorum.bootstrap.servers": f"{LOOPBACK}:{controller_port}",
        "listeners": f"PLAINTEXT://{LOOPBACK}:{port},CONTROLLER://{LOOPBACK}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": 1,
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "log.message.timestamp.type": "LogAppendTime",
        # benchmarks create and consume fresh topics at once: no rebalance delay
        "group.initial.rebalance.delay.ms": 0,
        "auto.create.topics.enable": "false",
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def log4j2_properties(log_file: Path) -> str:
    return "\n".join(
        [
            "status = warn",
            "appender.file.type = File",
            "appender.file.name = file",
            f"appender.file.fileName = {log_file}",
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.file.ref = file",
            "logger.kafka.name = org.apache.kafka",
            "logger.kafka.level = info",
            "",
        ]
    )


def cluster_id() -> str:
    """A KRaft cluster id: a random UUID, base64url without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def wait_until_reachable(bootstrap: str, timeout_s: float, alive=lambda: True) -> None:
    """Block until the broker answers a metadata request; BrokerError after timeout."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not alive():
            raise BrokerError("the broker process exited during start-up")
        try:
            metadata = admin.list_topics(timeout=2)
            if metadata.brokers:
                return
        except Exception as err:  # KafkaException while the broker is not up yet
            last = err
        time.sleep(0.3)
    raise BrokerError(f"Kafka at {bootstrap} did not answer within {timeout_s:.0f} s ({last})")


class EmbeddedBroker:
    """Start, find and stop the embedded broker whose state lives in ``home``.

    As a context manager it reuses a running broker, or starts one and stops
    it again on exit.
    """

    def __init__(self, home: Path | None = None, port: int | None = None, heap: str = "1G"):
        self.home = Path(home) if home else state_dir() / "broker"
        self.port = port
        self.heap = heap
        self._started_here = False

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    # --- inspection ------------------------------------------------------------
    def status(self) -> BrokerState | None:
        """The running broker, or None; a stale state (dead pid) is cleaned up."""
        if not self.state_file.exists():
            return None
        try:
            state = BrokerState(**json.loads(self.state_file.read_text()))
        except (ValueError, TypeError):
            log.warning("unreadable broker state %s: removing it", self.state_file)
            self._clean()
            return None
        if not is_embedded_broker(state.pid):
            print(
                f"Found a stale broker state (pid {state.pid} is gone): cleaning {self.home}",
                file=sys.stderr,
            )
            self._clean()
            return None
        return state

    # --- lifecycle -------------------------------------------------------------
    def start(self) -> BrokerState:
        """Start the broker, or return the one already running from this home."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self._lock():
            if state := self.status():
                if self.port and not state.bootstrap.endswith(f":{self.port}"):
                    raise BrokerError(
                        f"an embedded broker already runs at {state.bootstrap}; "
                        "stop it first to use another port"
                    )
                return state
            attempt = 1
            while True:
                try:
                    return self._start()
                except BrokerError as err:
                    # a free port picked for us can be taken by another process before
                    # the JVM binds it; a port the user chose is not retried
                    if self.port or attempt == START_ATTEMPTS:
                        raise
                    attempt += 1
                    log.warning("broker start failed (%s); retrying on other ports", err)

    def stop(self) -> bool:
        """Stop the broker and remove its state; False when none was running."""
        with self._lock():
            state = self.status()
            if state is None:
                return False
            proc = psutil.Process(state.pid)
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except psutil.TimeoutExpired:
                log.warning("broker did not stop within %.0f s: killing it", STOP_TIMEOUT_S)
                proc.kill()
                proc.wait(10)
            self._clean()
            return True

    def __enter__(self) -> BrokerState:
        running = self.status()
        state = self.start()
        self._started_here = running is None
        return state

    def __exit__(self, *exc) -> None:
        if self._started_here:
            self.stop()

    # --- internals -------------------------------------------------------------
    def _start(self) -> BrokerState:
        java = java_executable()
        if self.port:
            ensure_free(self.port)
        port = self.port or free_port()
        controller_port = free_port()
        jars = ivy.resolve(BROKER_ARTIFACTS)
        cp = ivy.classpath(jars)
        data_dir, log_dir = self.home / "data", self.home / "logs"
        shutil.rmtree(data_dir, ignore_errors=True)
        log_dir.mkdir(parents=True, exist_ok=True)
        config = self.home / "server.properties"
        config.write_text(server_properties(port, controller_port, data_dir))
        log_config = self.home / "log4j2.properties"
        log_config.write_text(log4j2_properties(log_dir / "server.log"))
        jvm = [
            java,
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            f"-Dlog4j2.configurationFile={log_config}",
        ]

        fmt = subprocess.run(
            [*jvm, "-cp", cp, "kafka.tools.StorageTool", "format", "--standalone",
             "-t", cluster_id(), "-c", str(config)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if fmt.returncode != 0:
            raise BrokerError(f"formatting the broker storage failed: {fmt.stderr.strip()[-500:]}")

        stdout = open(log_dir / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        proc = subprocess.Popen(
            [*jvm, "-cp", cp, "kafka.Kafka", str(config)],
            stdout=stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # survives the command that started it
        )  # fmt: skip
        stdout.close()
        bootstrap = f"{LOOPBACK}:{port}"
        print(
            f"Starting Kafka {KAFKA_VERSION} at {bootstrap} (logs: {log_dir})...", file=sys.stderr
        )
        try:
            wait_until_reachable(bootstrap, START_TIMEOUT_S, alive=lambda: proc.poll() is None)
        except BrokerError as err:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
            tail = _tail(log_dir / "server.log") or _tail(log_dir / "stdout.log")
            raise BrokerError(f"{err}; last log lines:\n{tail}") from err
        state = BrokerState(
            bootstrap=bootstrap,
            pid=proc.pid,
            kafka_version=KAFKA_VERSION,
            log_dir=str(log_dir),
            data_dir=str(data_dir),
            home=str(self.home),
            node_id=NODE_ID,
            started_at=time.time(),
        )
        self.state_file.write_text(json.dumps(asdict(state), indent=2) + "\n")
        return state

    def _clean(self) -> None:
        for name in ("state.json", "server.properties", "log4j2.properties"):
            (self.home / name).unlink(missing_ok=True)
        for name in ("data", "logs"):
            shutil.rmtree(self.home / name, ignore_errors=True)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise start/stop between processes sharing this home."""
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / "broker.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def is_embedded_broker(pid: int) -> bool:
    """True when ``pid`` is a live broker JVM started by :class:`EmbeddedBroker`."""
    try:
        proc = psutil.Process(pid)
        return (
            proc.is_running()
            and proc.status() != psutil.STATUS_ZOMBIE
            and ("kafka.Kafka" in proc.cmdline())
        )
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _tail(path: Path, lines: int = 15) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
