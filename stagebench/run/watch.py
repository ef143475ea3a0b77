"""Watching a run's output topic live, to tell when its warm-up is over.

A consumer thread reads every output as the job writes it and keeps, per broker
second, the latencies of the outputs appended in that second (output
LogAppendTime − the carried ``input_ts_latest``, one clock). The runner asks
:meth:`OutputWatcher.settled` every few seconds: warm-up is over once the
per-second median has settled over several consecutive windows
(:func:`evaluator.steady.is_settled`). The evaluator later recomputes every
latency from the topics; the watcher only decides when to start measuring.
"""

import json
import logging
import threading
import uuid
from collections import defaultdict

import numpy as np
from confluent_kafka import Consumer, KafkaException

from evaluator.config import STEADY_TOLERANCE
from evaluator.steady import is_settled
from ground.contract import INPUT_TS_LATEST, SECOND_MS
from ground.kafka import client

log = logging.getLogger(__name__)

POLL_S = 0.5
BATCH = 1000
FETCH_MIN_BYTES = 64 * 1024


class OutputWatcher:
    """Per-second latencies of one output topic, read by a daemon thread."""

    def __init__(self, bootstrap: str, topic: str):
        self._consumer = Consumer(
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
        self._thread.join(timeout=10)
        self._consumer.close()

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
                try:
                    latest = int(json.loads(value)[INPUT_TS_LATEST])
                except (ValueError, TypeError, KeyError):
                    continue  # malformed outputs are the evaluator's to count
                ts = msg.timestamp()[1]
                rows.append((ts // SECOND_MS, ts - latest))
            with self._lock:
                for second, latency in rows:
                    self._latencies[second].append(latency)
                self.outputs += len(rows)

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
        windows of ``window_s`` seconds (:func:`evaluator.steady.is_settled`).

        The newest second is left out: it is still being written.
        """
        seconds, p50 = self.per_second_p50()
        if seconds.size < 2:
            return False
        return is_settled(seconds[:-1], p50[:-1], window_s, tolerance)
