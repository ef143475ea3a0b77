"""Watching a run's output topic live, to tell when its warm-up is over.

A consumer thread reads every output as the job writes it and keeps, per broker
second, the latencies of the outputs appended in that second (output
LogAppendTime − the carried ``input_ts_latest``, one clock; a user's job that only names
its input, by the timestamp of that input, read from the input topics). The runner asks
:meth:`OutputWatcher.settled` every few seconds: warm-up is over once the
per-second median has settled over several consecutive windows
(:func:`evaluator.statistics.steady.is_settled`). The evaluator later recomputes every
latency from the topics; the watcher only decides when to start measuring.
"""

import json
import logging
import threading
import uuid
from array import array
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from confluent_kafka import Consumer, KafkaException

from evaluator.config import STEADY_TOLERANCE
from evaluator.statistics.steady import is_settled
from ground.contract import (
    INPUT_TS_LATEST,
    SECOND_MS,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
)
from ground.kafka import client

log = logging.getLogger(__name__)

POLL_S = 0.5
BATCH = 1000
FETCH_MIN_BYTES = 64 * 1024


PENDING = 100_000
"""Outputs kept until the input they name has been read; beyond, the oldest are dropped."""


def _consumer(bootstrap: str) -> Consumer:
    return Consumer(
        client.settings(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"stagebench-watch-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                # fetch in batches of up to half a second, not every record as it lands:
                # the watcher decides warm-up, it does not need milliseconds
                "fetch.min.bytes": FETCH_MIN_BYTES,
                "fetch.wait.max.ms": int(POLL_S * 1000),
                "log_level": 0,
            }
        )
    )


class InputTimes:
    """The input topics' broker timestamps by partition and offset, read as they are
    appended (one array per partition: a fresh topic's offsets run on without gaps)."""

    def __init__(self, bootstrap: str, topics: Sequence[str]):
        self._consumer = _consumer(bootstrap)
        self._consumer.subscribe(list(topics))
        self._times: dict[tuple[str, int], tuple[int, array]] = {}

    def read(self) -> None:
        for msg in self._consumer.consume(BATCH, 0.05):
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            if msg.error() is not None or topic is None or partition is None or offset is None:
                continue
            first, times = self._times.setdefault((topic, partition), (offset, array("q")))
            if offset == first + len(times):
                times.append(msg.timestamp()[1])

    def at(self, topic: str, partition: int, offset: int) -> int | None:
        """The named input's timestamp; None until it has been read."""
        first, times = self._times.get((topic, partition), (0, array("q")))
        return times[offset - first] if 0 <= offset - first < len(times) else None

    def close(self) -> None:
        self._consumer.close()


class OutputWatcher:
    """Per-second latencies of one output topic, read by a daemon thread; with ``inputs``
    (a user's job), an output that carries no ``input_ts_latest`` is timed from the input
    it names."""

    def __init__(self, bootstrap: str, topic: str, inputs: Sequence[str] = ()):
        self._consumer = _consumer(bootstrap)
        self._inputs = InputTimes(bootstrap, inputs) if inputs else None
        self._pending: list[tuple[int, tuple[str, int, int]]] = []
        self._topic = topic
        self._latencies: dict[int, list[int]] = defaultdict(list)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="output-watch", daemon=True)
        self.outputs = 0

    def start(self) -> "OutputWatcher":
        self._consumer.subscribe([self._topic])
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=10)
        self._consumer.close()
        if self._inputs is not None:
            self._inputs.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                messages = self._consumer.consume(BATCH, POLL_S)
            except KafkaException as err:  # the run's health check reports a dead broker
                log.debug("output watcher: %s", err)
                continue
            rows = []
            for msg in messages:
                value = msg.value()
                if msg.error() is not None or value is None:
                    continue
                ts = msg.timestamp()[1]
                try:
                    output = json.loads(value)
                    if INPUT_TS_LATEST in output or self._inputs is None:
                        rows.append((ts // SECOND_MS, ts - int(output[INPUT_TS_LATEST])))
                    else:
                        named = (str(output[SOURCE_TOPIC]), int(output[SOURCE_PARTITION]),
                                 int(output[SOURCE_OFFSET]))  # fmt: skip
                        self._pending.append((ts, named))
                except (ValueError, TypeError, KeyError):
                    continue  # malformed outputs are the evaluator's to count
            rows += self._named()
            with self._lock:
                for second, latency in rows:
                    self._latencies[second].append(latency)
                self.outputs += len(rows)

    def _named(self) -> list[tuple[int, int]]:
        """(second, latency) of the pending outputs whose named input has been read."""
        if self._inputs is None or not self._pending:
            return []
        self._inputs.read()
        rows, waiting = [], []
        for ts, named in self._pending:
            latest = self._inputs.at(*named)
            if latest is None:
                waiting.append((ts, named))
            else:
                rows.append((ts // SECOND_MS, ts - latest))
        self._pending = waiting[-PENDING:]
        return rows

    def per_second_p50(self, since_s: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(broker seconds, median latency ms) of every second with outputs, from ``since_s``."""
        with self._lock:
            items = sorted(
                (s, np.median(v))
                for s, v in self._latencies.items()
                if since_s is None or s >= since_s
            )
        if not items:
            return np.zeros(0), np.zeros(0)
        seconds, p50 = zip(*items, strict=True)
        return np.asarray(seconds, float), np.asarray(p50, float)

    def settled(self, window_s: float, tolerance: float = STEADY_TOLERANCE) -> bool:
        """Whether the per-second median has settled to ``tolerance`` over the last
        windows of ``window_s`` seconds (:func:`evaluator.statistics.steady.is_settled`).

        The newest second is left out: it is still being written.
        """
        seconds, p50 = self.per_second_p50()
        if seconds.size < 2:
            return False
        return is_settled(seconds[:-1], p50[:-1], window_s, tolerance)
