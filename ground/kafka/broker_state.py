"""The embedded cluster's state file, ``state.json`` in its home: each node's pid,
addresses and directories, which later commands read to find the cluster
(:mod:`ground.kafka.broker` writes it, whole, under its lock)."""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ground import files
from ground.errors import BrokerError
from ground.kafka.processes import is_embedded_broker


@dataclass(frozen=True)
class NodeState:
    """One node of the embedded cluster; ``pid`` is 0 while the node is stopped."""

    node_id: int
    pid: int
    bootstrap: str
    controller_port: int
    log_dir: str
    data_dir: str

    @property
    def config(self) -> Path:
        """The node's ``server.properties``, beside its logs."""
        return Path(self.log_dir).parent / "server.properties"

    @property
    def running(self) -> bool:
        return self.pid > 0 and is_embedded_broker(self.pid, self.config)


@dataclass(frozen=True)
class BrokerState:
    """What ``status --json`` prints and later commands read."""

    bootstrap: str
    """Every node's address, comma-separated: clients find the cluster through any."""
    kafka_version: str
    home: str
    started_at: float
    nodes: tuple[NodeState, ...]
    heap: str | None = None
    """Every node's JVM heap, so a node started again gets the heap it had (None: a
    state written before it was recorded; the starting object's heap then)."""

    @property
    def pids(self) -> list[int]:
        """The running nodes' JVMs."""
        return [n.pid for n in self.nodes if n.running]

    def node(self, node_id: int) -> NodeState:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise BrokerError(f"no node {node_id} (nodes: {[n.node_id for n in self.nodes]})")

    def as_json(self) -> dict:
        return {**asdict(self), "nodes": [{**asdict(n), "running": n.running} for n in self.nodes]}

    @classmethod
    def from_json(cls, doc: dict) -> "BrokerState":
        nodes = tuple(NodeState(**n) for n in doc.pop("nodes"))
        return cls(**doc, nodes=nodes)


def read(path: Path) -> BrokerState:
    """The state in ``path``; FileNotFoundError, or ValueError, TypeError or KeyError when it
    is not a state."""
    return BrokerState.from_json(json.loads(path.read_text()))


def write(path: Path, state: BrokerState) -> None:
    files.write(path, json.dumps(asdict(state), indent=2) + "\n")
