"""The run's health monitor: the run flow (:mod:`stagebench.run.runner`) asks it every few
seconds, and it fails the run at once when the job died, the publisher failed, the broker
stopped answering or a partition changed leader. On a cluster a leader change (a broker
restarted) would mix two broker clocks, so it says which partitions moved and when.
It also knows the broker's processes on this machine, which a broker fault replaces."""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import psutil

from ground.errors import BrokerError, TopicError
from ground.kafka.local import LocalBroker, local_broker
from ground.kafka.naming import RunTopics
from ground.kafka.node import wait_until_reachable
from ground.kafka.topics import admin_client, current_leaders
from stagebench.run.job import Job
from stagebench.run.publisher import PublisherThread

log = logging.getLogger(__name__)

LEADERS_EVERY_S = 5.0
BROKER_FAILURES_TOLERATED = 3


class HealthMonitor:
    """Checks of one run's job, publisher, broker and partition leaders."""

    def __init__(self, bootstrap: str, topics: RunTopics, engine: Job, publisher: PublisherThread):
        self.bootstrap, self.topics, self.engine, self.publisher = (
            bootstrap, topics, engine, publisher,
        )  # fmt: skip
        # its processes are sampled as the broker when it runs here, in a container too
        self.local_broker: LocalBroker | None = local_broker(bootstrap)
        self.leaders_before: dict[str, list[int]] = {}
        """Each partition's leader when the topics were created: the ones to keep."""
        self._admin = admin_client(bootstrap)
        self._broker_failures = 0
        self._next_leader_check = 0.0
        self._broker_down = False

    @property
    def broker_pids(self) -> tuple[int, ...]:
        """Roots of the broker's process trees on this machine; none for a remote Kafka."""
        return self.local_broker.pids if self.local_broker else ()

    def check(self) -> None:
        """Fail fast when the job died, the publisher failed, the broker stopped answering
        or a partition changed leader."""
        self.engine.check()
        if err := self.publisher.error:
            raise err
        if self._broker_down:
            return
        if not self._broker_alive():
            raise BrokerError(f"Kafka at {self.bootstrap} stopped answering during the run")
        if time.monotonic() >= self._next_leader_check:
            self._check_leaders()
            self._next_leader_check = time.monotonic() + LEADERS_EVERY_S

    @contextmanager
    def broker_outage(self) -> Iterator[None]:
        """While a fault holds the broker down: the check must not take the outage for a
        failure. After it the broker runs as new processes, which are the ones to watch."""
        self._broker_down = True
        try:
            yield
        finally:
            self._broker_down = False
        self.local_broker = local_broker(self.bootstrap)

    def _check_leaders(self) -> None:
        """TopicError when any partition is led by another broker than at the start.

        A partition without a leader for the moment (-1, an election under way or the
        only broker restarting) or missing from the metadata (a broker just back) is
        unknown this round, not a change: nothing is appended while it has no leader,
        and whoever leads next is judged at the next poll and after the run.
        """
        try:
            now = current_leaders(self._admin, self.topics.all)
        except BrokerError as err:  # liveness is judged by _broker_alive
            log.info("reading the partition leaders: %s", err)
            return
        moved = {
            f"{name}[{p}]: {was} → {led}"
            for name, leaders in self.leaders_before.items()
            for p, was in enumerate(leaders)
            if (led := _leader(now, name, p)) is not None and led != was
        }
        if moved:
            raise TopicError(
                f"partition leaders changed during the run ({', '.join(sorted(moved))}), "
                f"seen at {datetime.now(UTC):%H:%M:%S} UTC (local clock): "
                "timestamps from then on would come from another broker's clock, so the run "
                "is stopped and nothing is measured"
            )

    def _broker_alive(self) -> bool:
        """A local broker: any of its processes runs (a cluster with one node down still
        answers; a leader change is :meth:`_check_leaders`'s). Else: it answers."""
        if self.broker_pids:
            return any(_running(pid) for pid in self.broker_pids)
        try:
            wait_until_reachable(self.bootstrap, 2.0)
            self._broker_failures = 0
        except BrokerError:
            self._broker_failures += 1
        return self._broker_failures < BROKER_FAILURES_TOLERATED


def _leader(leaders: dict[str, list[int]], topic: str, partition: int) -> int | None:
    """The broker leading ``partition`` of ``topic`` in ``leaders``; None when unknown."""
    led = leaders.get(topic, [])
    return led[partition] if partition < len(led) and led[partition] >= 0 else None


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
