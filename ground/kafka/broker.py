"""The embedded broker: a real Apache Kafka (KRaft) on 127.0.0.1, one node or several.

For machines without Docker and without a Kafka of their own. The official
broker jars, pinned to exact versions and checksums (``broker_jars.txt``), are
downloaded from Maven Central once (:mod:`ground.jvm.maven`); storage is
formatted, and ``kafka.Kafka`` runs as a detached JVM per node in combined
broker+controller mode with ``log.message.timestamp.type=LogAppendTime``.
Several nodes (``brokers``) form one cluster with a static controller quorum
of all of them, each node with its own ports, data and logs under
``home/node-<id>``. A state file records the cluster, so later commands (and a
second ``start``) reuse it; a state whose processes are all gone is detected
and cleaned. One node can be stopped and started again on its data (a leader
change, a broker restart). The state file is :mod:`ground.kafka.broker_state`, a node's
JVM :mod:`ground.kafka.node`; every start, stop and read of the state holds the home's
lock, so concurrent commands on one home take turns.
"""

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil

from ground.errors import BrokerError
from ground.kafka import KAFKA_VERSION, MAX_BROKERS, broker_state
from ground.kafka.broker_config import cluster_id, log4j2_properties, server_properties
from ground.kafka.broker_state import BrokerState, NodeState
from ground.kafka.node import START_TIMEOUT_S, format_storage, launch, wait_until_reachable
from ground.kafka.ports import LOOPBACK, ensure_free, free_port
from ground.kafka.processes import STOP_TIMEOUT_S, tail, terminate, wait_gone
from ground.paths import locked, state_dir

log = logging.getLogger(__name__)

START_ATTEMPTS = 3


class EmbeddedBroker:
    """Start, find and stop the embedded cluster whose state lives in ``home``.

    ``brokers`` nodes (1 by default) with ids 1…N; ``port`` is node 1's client port
    (default: a free one). As a context manager it reuses a running cluster, or
    starts one and stops it again on exit.
    """

    def __init__(
        self,
        home: Path | None = None,
        port: int | None = None,
        heap: str | None = None,
        brokers: int = 1,
    ):
        if not 1 <= brokers <= MAX_BROKERS:
            raise BrokerError(f"brokers must be 1 to {MAX_BROKERS}, got {brokers}")
        self.home = Path(home) if home else state_dir() / "broker"
        self.port = port
        self.brokers = brokers
        # three JVMs share the machine with Spark: a smaller heap each
        self.heap = heap or ("1G" if brokers == 1 else "512M")
        self._started_here = False

    @property
    def state_file(self) -> Path:
        return self.home / "state.json"

    # --- inspection ------------------------------------------------------------
    def status(self) -> BrokerState | None:
        """The running cluster, or None; a state whose nodes have all died is cleaned up.

        A cluster with nodes stopped on purpose (:meth:`stop_node`, even all of them) is
        still there, to be started again on its data. Read under the lock: a start or stop
        in another process is waited for, never read half-way or cleaned under it.
        """
        with self._lock():
            return self._status()

    def _status(self) -> BrokerState | None:
        if not self.state_file.exists():
            return None
        try:
            state = broker_state.read(self.state_file)
        except (ValueError, TypeError, KeyError):
            log.warning("unreadable broker state %s: removing it", self.state_file)
            self._clean()
            return None
        if not state.pids and all(n.pid for n in state.nodes):
            pids = ", ".join(str(n.pid) for n in state.nodes)
            print(
                f"Found a stale broker state (pid {pids} gone): cleaning {self.home}",
                file=sys.stderr,
            )
            self._clean()
            return None
        return state

    def footprint(self) -> tuple[float, float] | None:
        """(MB its running JVMs hold in memory, MB its home takes on disk); None when no
        node runs. The disk is what the files' blocks take: a partition's index files are
        sparse, 10 MB each in size but a few kB on the disk."""
        if (state := self.status()) is None or not state.pids:
            return None
        rss = 0
        for pid in state.pids:
            with contextlib.suppress(psutil.NoSuchProcess):
                rss += psutil.Process(pid).memory_info().rss
        disk = 0
        for root, _, names in os.walk(self.home):  # the broker adds and removes files meanwhile
            for name in names:
                with contextlib.suppress(OSError):
                    disk += os.stat(os.path.join(root, name)).st_blocks * 512
        return rss / 1e6, disk / 1e6

    # --- lifecycle -------------------------------------------------------------
    def start(self) -> BrokerState:
        """Start the cluster, or return the one already running from this home."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self._lock():
            if state := self._status():
                if self.port and not state.nodes[0].bootstrap.endswith(f":{self.port}"):
                    raise BrokerError(
                        f"an embedded broker already runs at {state.bootstrap}; "
                        "stop it first to use another port"
                    )
                if len(state.nodes) != self.brokers:
                    raise BrokerError(
                        f"an embedded cluster of {len(state.nodes)} broker(s) already runs at "
                        f"{state.bootstrap}; stop it first to start {self.brokers}"
                    )
                # a node left stopped (a fault whose run was killed mid-outage) is
                # started again on its data, so the address handed out answers
                for node in state.nodes:
                    if not node.running:
                        log.warning("broker node %d was stopped: starting it", node.node_id)
                        state = self._relaunch(state, node)
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
        """Stop every node and remove the state and data; False when none was running."""
        with self._lock():
            state = self._status()
            if state is None:
                return False
            terminate([psutil.Process(pid) for pid in state.pids])
            self._clean()
            return True

    def stop_node(self, node_id: int, kill: bool = False) -> None:
        """Stop one node (SIGTERM, or SIGKILL with ``kill``), keeping its data."""
        with self._lock():
            state = self._running()
            node = state.node(node_id)
            if node.running:
                proc = psutil.Process(node.pid)
                if kill:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        proc.kill()
                    wait_gone([proc], STOP_TIMEOUT_S)
                else:
                    terminate([proc])
            self._save(state, replace(node, pid=0))

    def start_node(self, node_id: int) -> NodeState:
        """Start a stopped node again on its own data; it rejoins the cluster."""
        with self._lock():
            state = self._running()
            node = state.node(node_id)
            if node.running:
                return node
            return self._relaunch(state, node).node(node_id)

    def __enter__(self) -> BrokerState:
        running = self.status()
        state = self.start()
        self._started_here = running is None
        return state

    def __exit__(self, *exc: object) -> None:
        if self._started_here:
            self.stop()

    # --- internals -------------------------------------------------------------
    def _start(self) -> BrokerState:
        if self.port:
            ensure_free(self.port)
        ids = range(1, self.brokers + 1)
        ports = {n: self.port if n == 1 and self.port else free_port() for n in ids}
        voters = {n: free_port() for n in ids}
        cluster = cluster_id()
        self._clean()
        state = BrokerState("", KAFKA_VERSION, str(self.home), time.time(), (), self.heap)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for n in ids:
                node_home = self.home / f"node-{n}"
                data_dir, log_dir = node_home / "data", node_home / "logs"
                log_dir.mkdir(parents=True, exist_ok=True)
                (node_home / "server.properties").write_text(
                    server_properties(n, ports[n], voters[n], data_dir, voters)
                )
                (node_home / "log4j2.properties").write_text(
                    log4j2_properties(log_dir / "server.log")
                )
                format_storage(node_home, self.heap, cluster, standalone=self.brokers == 1)
                procs.append(launch(node_home, self.heap))
                node = NodeState(n, procs[-1].pid, f"{LOOPBACK}:{ports[n]}", voters[n],
                                 str(log_dir), str(data_dir))  # fmt: skip
                nodes = (*state.nodes, node)
                # each node recorded once launched: `broker stop` finds every JVM even
                # when this start is cut short (Ctrl-C, SIGTERM, a later node's failure)
                state = replace(state, bootstrap=",".join(n.bootstrap for n in nodes),
                                nodes=nodes)  # fmt: skip
                self._write(state)
            what = "Kafka" if self.brokers == 1 else f"a {self.brokers}-broker Kafka cluster"
            print(f"Starting {what} {KAFKA_VERSION} at {state.bootstrap} (logs: {self.home})...",
                  file=sys.stderr)  # fmt: skip
            wait_until_reachable(
                state.bootstrap,
                START_TIMEOUT_S,
                alive=lambda: all(p.poll() is None for p in procs),
                brokers=self.brokers,
            )
        except BaseException as err:
            self._abandon(procs)
            if not isinstance(err, BrokerError):
                raise
            logs = "\n".join(
                f"node {n.node_id}:\n" + (tail(Path(n.log_dir) / "server.log")
                                          or tail(Path(n.log_dir) / "stdout.log"))
                for n in state.nodes
            )  # fmt: skip
            raise BrokerError(f"{err}; last log lines:\n{logs}") from err
        return state

    def _abandon(self, procs: list[subprocess.Popen[bytes]]) -> None:
        """Kill the nodes of a start that did not finish and forget them (their logs stay)."""
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
        self.state_file.unlink(missing_ok=True)

    def _running(self) -> BrokerState:
        if (state := self._status()) is None:
            raise BrokerError("no embedded broker is running")
        return state

    def _relaunch(self, state: BrokerState, node: NodeState) -> BrokerState:
        """Launch a stopped ``node`` on its own data and wait until it answers; the new
        state."""
        node = replace(node, pid=launch(Path(node.log_dir).parent, state.heap or self.heap).pid)
        state = self._save(state, node)
        wait_until_reachable(node.bootstrap, START_TIMEOUT_S, lambda: node.running)
        return state

    def _save(self, state: BrokerState, node: NodeState) -> BrokerState:
        nodes = tuple(node if n.node_id == node.node_id else n for n in state.nodes)
        state = replace(state, nodes=nodes)
        self._write(state)
        return state

    def _write(self, state: BrokerState) -> None:
        broker_state.write(self.state_file, state)

    def _clean(self) -> None:
        self.state_file.unlink(missing_ok=True)
        for node_home in self.home.glob("node-*"):
            shutil.rmtree(node_home, ignore_errors=True)

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        """Serialise start, stop and reads of the state between processes sharing this home."""
        return locked(
            self.home / "broker.lock",
            "Waiting for another stagebench command that is starting or stopping the "
            f"embedded broker in {self.home}...",
        )
