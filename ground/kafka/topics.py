"""Benchmark topics that obey the one-clock rule (docs/method.md#clock).

Every topic is created with ``message.timestamp.type=LogAppendTime`` and an
explicit replica assignment whose first replica (the preferred leader) is one
chosen broker, so all timestamps of a run come from that broker's clock.
:func:`check_topics` verifies both before a run is measured.
"""

import logging
import time
from dataclasses import dataclass, field

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    ClusterMetadata,
    ConfigResource,
    NewTopic,
    OffsetSpec,
)

from ground.errors import BrokerError, TopicError
from ground.kafka import MAX_MESSAGE_BYTES, client
from ground.kafka.naming import run_of

log = logging.getLogger(__name__)

TIMESTAMP_TYPE = "message.timestamp.type"
LOG_APPEND_TIME = "LogAppendTime"
MIN_INSYNC = "min.insync.replicas"
MAX_MESSAGE = "max.message.bytes"
MAX_REPLICATION = 3
TIMEOUT_S = 15.0
PROPAGATION_S = 5.0


def admin_client(bootstrap: str) -> AdminClient:
    return AdminClient(client.settings({"bootstrap.servers": bootstrap, "log_level": 0}))


def _metadata(admin: AdminClient, bootstrap: str = "the broker") -> ClusterMetadata:
    try:
        return admin.list_topics(timeout=TIMEOUT_S)
    except KafkaException as err:
        raise BrokerError(f"cannot reach Kafka at {bootstrap}: {err.args[0]}") from err


def broker_ids(admin: AdminClient, bootstrap: str) -> list[int]:
    return sorted(_metadata(admin, bootstrap).brokers)


def replica_assignment(
    brokers: list[int], leader: int, partitions: int, replication: int
) -> list[list[int]]:
    """``partitions`` replica lists, each led by ``leader``, followers round-robin."""
    if leader not in brokers:
        raise TopicError(f"broker {leader} is not in the cluster (brokers: {brokers})")
    if not 1 <= replication <= len(brokers):
        raise TopicError(
            f"replication must be 1 to {len(brokers)} (the brokers {brokers}), got {replication}"
        )
    followers = [b for b in brokers if b != leader]
    return [
        [leader] + [followers[(p + i) % len(followers)] for i in range(replication - 1)]
        for p in range(partitions)
    ]


def create_topics(
    bootstrap: str,
    names: list[str],
    partitions: int = 1,
    leader: int | None = None,
    config: dict[str, str] | None = None,
    replication: int | None = None,
) -> int:
    """Create LogAppendTime topics led by ``leader`` (default: lowest broker id).

    ``replication`` defaults to the broker count, at most :data:`MAX_REPLICATION`;
    ``min.insync.replicas`` is one less (at least 1), so a topic stays writable with
    one replica down; ``max.message.bytes`` is :data:`ground.kafka.MAX_MESSAGE_BYTES`
    unless ``config`` says otherwise. Returns the leader broker id. A topic that exists already is
    an error: every run gets fresh topics.
    """
    admin = admin_client(bootstrap)
    brokers = broker_ids(admin, bootstrap)
    leader = brokers[0] if leader is None else leader
    replication = min(len(brokers), MAX_REPLICATION) if replication is None else replication
    assignment = replica_assignment(brokers, leader, partitions, replication)
    topic_config = {
        MIN_INSYNC: str(max(1, replication - 1)),
        MAX_MESSAGE: str(MAX_MESSAGE_BYTES),
        **(config or {}),
        TIMESTAMP_TYPE: LOG_APPEND_TIME,
    }
    futures = admin.create_topics(
        [
            NewTopic(name, num_partitions=partitions, replica_assignment=assignment,
                     config=topic_config)
            for name in names
        ],
        operation_timeout=TIMEOUT_S,
        request_timeout=TIMEOUT_S,
    )  # fmt: skip
    for name, future in futures.items():
        try:
            future.result()
        except KafkaException as err:
            raise TopicError(f"cannot create topic {name!r}: {err.args[0].str()}") from err
    _wait_for_leaders(admin, names, partitions)
    return leader


def _wait_for_leaders(admin: AdminClient, names: list[str], partitions: int) -> None:
    """Topic creation returns before every partition has a leader; wait for them."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        metadata = _metadata(admin)
        ready = all(
            name in metadata.topics
            and len(metadata.topics[name].partitions) == partitions
            and all(p.leader >= 0 for p in metadata.topics[name].partitions.values())
            for name in names
        )
        if ready:
            return
        time.sleep(0.1)
    raise TopicError(f"topics {names} have no leader after {TIMEOUT_S:.0f} s")


@dataclass
class TopicReport:
    """What :func:`check_topics` found; ``problems`` empty means measurable."""

    timestamp_types: dict[str, str] = field(default_factory=dict)
    leaders: dict[str, list[int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def leader(self) -> int | None:
        found = {b for leaders in self.leaders.values() for b in leaders}
        return found.pop() if len(found) == 1 else None


def inspect_topics(bootstrap: str, names: list[str], leader: int | None = None) -> TopicReport:
    """Timestamp type and partition leaders of ``names``, with every rule violation."""
    admin = admin_client(bootstrap)
    broker_ids(admin, bootstrap)  # a clear error when Kafka is unreachable
    report = TopicReport()
    # on a cluster, a topic just created elsewhere reaches each broker's metadata a
    # moment later: a missing topic is asked about again for a few seconds
    deadline = time.monotonic() + PROPAGATION_S
    while True:
        metadata = _metadata(admin)
        present = [n for n in names if n in metadata.topics and not metadata.topics[n].error]
        if len(present) == len(names) or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    report.problems += [f"topic {n!r} does not exist" for n in names if n not in present]
    if not present:
        return report
    resources = [ConfigResource(ConfigResource.Type.TOPIC, n) for n in present]
    for resource, future in admin.describe_configs(resources, request_timeout=TIMEOUT_S).items():
        try:
            entry = future.result().get(TIMESTAMP_TYPE)
        except KafkaException as err:
            raise TopicError(f"cannot read the config of {resource.name!r}: {err}") from err
        ts_type = entry.value if entry is not None else "unknown"
        report.timestamp_types[resource.name] = ts_type
        if ts_type != LOG_APPEND_TIME:
            report.problems.append(
                f"topic {resource.name!r} uses {TIMESTAMP_TYPE}={ts_type}; latencies need "
                f"{LOG_APPEND_TIME} (one broker clock, docs/method.md#clock)"
            )
    report.leaders = partition_leaders(metadata, present)
    report.problems += leader_problems(report.leaders, leader)
    return report


def leader_problems(leaders: dict[str, list[int]], leader: int | None = None) -> list[str]:
    """What breaks the same-leader rule in ``leaders`` (per topic, per partition; -1:
    none): a partition without a leader, partitions led by different brokers, or led by
    another broker than ``leader``."""
    detail = ", ".join(f"{n}: {ls}" for n, ls in leaders.items())
    every = {b for led in leaders.values() for b in led}
    led = sorted(every - {-1})
    problems = []
    if -1 in every:
        problems.append(f"partitions without a leader (-1: no broker serves them; {detail})")
    if len(led) > 1:
        problems.append(
            f"partitions are led by brokers {led}; every partition must have the "
            f"same leader so all timestamps come from one clock ({detail})"
        )
    elif leader is not None and led and led != [leader]:
        problems.append(f"partitions are led by broker {led[0]}, not {leader}")
    return problems


def partition_leaders(metadata: ClusterMetadata, names: list[str]) -> dict[str, list[int]]:
    """Leader broker of every partition of ``names`` (-1: none), from cluster metadata."""
    leaders = {}
    for name in names:
        partitions = metadata.topics[name].partitions
        leaders[name] = [partitions[p].leader for p in sorted(partitions)]
    return leaders


def current_leaders(admin: AdminClient, names: list[str]) -> dict[str, list[int]]:
    """Leaders now, as :func:`partition_leaders`, of those of ``names`` in the metadata:
    one metadata request, for a run to poll; BrokerError when Kafka does not answer."""
    metadata = _metadata(admin)
    return partition_leaders(metadata, [n for n in names if n in metadata.topics])


def check_topics(bootstrap: str, names: list[str], leader: int | None = None) -> TopicReport:
    """The report of :func:`inspect_topics`; TopicError listing every problem."""
    report = inspect_topics(bootstrap, names, leader)
    if report.problems:
        raise TopicError("refusing to measure: " + "; ".join(report.problems))
    return report


def delete_topics(bootstrap: str, names: list[str]) -> list[str]:
    """Delete ``names``; the failures, one line each (topic and Kafka's reason)."""
    admin = admin_client(bootstrap)
    failed = []
    for name, future in admin.delete_topics(names, operation_timeout=TIMEOUT_S).items():
        try:
            future.result()
        except KafkaException as err:
            log.warning("cannot delete topic %s: %s", name, err)
            failed.append(f"{name}: {err.args[0].str()}")
    return failed


@dataclass(frozen=True)
class PastRun:
    """The topics of one past run on a broker, and the append time of its newest record."""

    run: str
    topics: tuple[str, ...]
    newest_ms: int | None
    """None: none of its topics holds a record, so its age is unknown."""


def runs_on(bootstrap: str) -> list[PastRun]:
    """Every run whose topics are on the broker, oldest first (those of unknown age last).
    A run whose topics once held records that retention has deleted since is older than
    any age (its newest record: 0, the epoch)."""
    admin = admin_client(bootstrap)
    metadata = _metadata(admin, bootstrap)
    by_run: dict[str, list[str]] = {}
    for name in sorted(metadata.topics):
        if (run := run_of(name)) is not None:
            by_run.setdefault(run, []).append(name)
    partitions = [
        TopicPartition(name, p)
        for names in by_run.values()
        for name in names
        for p in metadata.topics[name].partitions
    ]
    newest = _listed(admin, partitions, OffsetSpec.max_timestamp(), "timestamp")
    ends = _listed(admin, partitions, OffsetSpec.latest(), "offset")
    runs = []
    for run, names in by_run.items():
        stamps = [newest[n] for n in names if n in newest]
        if not stamps and any(ends.get(n, 0) > 0 for n in names):
            stamps = [0]  # records once written, all deleted by retention
        runs.append(PastRun(run, tuple(names), max(stamps, default=None)))
    return sorted(runs, key=lambda r: (r.newest_ms is None, r.newest_ms or 0, r.run))


def _listed(
    admin: AdminClient, partitions: list[TopicPartition], spec: OffsetSpec, field: str
) -> dict[str, int]:
    """The largest ``field`` (``offset`` or ``timestamp``) that ``spec`` lists in each
    topic's partitions, by topic; a topic whose partitions list none (-1) is left out."""
    found: dict[str, int] = {}
    if not partitions:
        return found
    futures = admin.list_offsets({tp: spec for tp in partitions}, request_timeout=TIMEOUT_S)
    for tp, future in futures.items():
        try:
            value = int(getattr(future.result(), field))
        except KafkaException as err:
            raise TopicError(f"cannot list the offsets of {tp.topic}: {err}") from err
        if value >= 0:
            found[tp.topic] = max(found.get(tp.topic, value), value)
    return found


def older_than(runs: list[PastRun], now_ms: int, age_ms: int) -> list[PastRun]:
    """The runs whose newest record was appended more than ``age_ms`` before ``now_ms``
    (a run of unknown age is never among them: it may be one being set up)."""
    return [r for r in runs if r.newest_ms is not None and now_ms - r.newest_ms > age_ms]
