"""One node of the embedded broker as a process: its JVM's command line, its storage
formatted, its ``kafka.Kafka`` JVM launched, and the wait until the cluster answers.
:mod:`ground.kafka.broker` starts each node of the cluster with these."""

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from ground.errors import BrokerError
from ground.jvm import maven
from ground.jvm.java import java_executable
from ground.kafka import client

BROKER_JARS = maven.read_pins(Path(__file__).with_name("broker_jars.txt"))
"""The broker's class path: ``kafka_2.13`` at :data:`~ground.kafka.KAFKA_VERSION` with its
runtime dependencies, and the log4j2 binding the official distribution adds."""
START_TIMEOUT_S = 90.0


def wait_until_reachable(
    bootstrap: str,
    timeout_s: float,
    alive: Callable[[], bool] = lambda: True,
    brokers: int = 1,
    secured: bool = False,
) -> None:
    """Block until Kafka answers a metadata request listing at least ``brokers`` brokers
    (``secured``: with the cluster's client properties, :mod:`ground.kafka.client`);
    BrokerError after the timeout or when ``alive()`` turns False."""
    base: dict[str, Any] = {"bootstrap.servers": bootstrap, "log_level": 0}
    admin = AdminClient(client.settings(base) if secured else base)
    deadline = time.monotonic() + timeout_s
    last: Exception | str | None = None
    while time.monotonic() < deadline:
        if not alive():
            raise BrokerError("the broker process exited during start-up")
        try:
            metadata = admin.list_topics(timeout=2)
            if len(metadata.brokers) >= brokers:
                return
            last = f"{len(metadata.brokers)} of {brokers} brokers registered"
        except Exception as err:  # KafkaException while the broker is not up yet
            last = err
        time.sleep(0.3)
    raise BrokerError(f"Kafka at {bootstrap} did not answer within {timeout_s:.0f} s ({last})")


def jvm(node_home: Path, heap: str) -> list[str]:
    """A JVM's command line up to its main class, on the broker's class path with the
    node's logging configuration and a fixed ``heap``."""
    return [
        java_executable(),
        f"-Xms{heap}",
        f"-Xmx{heap}",
        f"-Dlog4j2.configurationFile={node_home / 'log4j2.properties'}",
        "-cp",
        maven.classpath(maven.resolve(BROKER_JARS, "the Kafka broker's jars")),
    ]


def format_storage(node_home: Path, heap: str, cluster: str, standalone: bool) -> None:
    """Format the node's storage for ``cluster``; BrokerError with the tool's error."""
    fmt = subprocess.run(
        [*jvm(node_home, heap), "kafka.tools.StorageTool", "format",
         *(["--standalone"] if standalone else []),
         "-t", cluster, "-c", str(node_home / "server.properties")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if fmt.returncode != 0:
        raise BrokerError(f"formatting the broker storage failed: {fmt.stderr.strip()[-500:]}")


def launch(node_home: Path, heap: str) -> subprocess.Popen:
    """The node's ``kafka.Kafka`` JVM, in a session of its own, its output in its logs."""
    log_dir = node_home / "logs"
    stdout = open(log_dir / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [*jvm(node_home, heap), "kafka.Kafka", str(node_home / "server.properties")],
        stdout=stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # survives the command that started it
    )  # fmt: skip
    stdout.close()
    return proc
