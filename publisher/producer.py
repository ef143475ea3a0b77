"""The open-loop send loop: messages leave when the schedule says, not when the last batch ended.

The run starts on a whole wall-clock second, so tick ``k`` (one data minute)
covers a whole second at the default time scale and its observation time is
the start of that second (docs/method.md#data). Each loop iteration sends every pair that
is due, then sleeps until the next one is due; a slow publisher therefore
shows up as send lag (actual − scheduled send time), never as a quietly lower
rate. Delivery reports are requested for failures only, which keeps the hot
path cheap: after the final flush, delivered = sent − failed − still queued.

:func:`publish` is safe to run in a thread: it installs no signal handler and
prints nothing (progress goes to the callback, warnings to logging).
"""

import logging
import math
import threading
import time
from array import array
from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from ground.errors import PublishError
from ground.kafka import MAX_MESSAGE_BYTES, client
from publisher.config import PublisherConfig
from publisher.faulty import FaultySource
from publisher.lines import LinesSource
from publisher.replay import ReplaySource
from publisher.sizing import derive
from publisher.source import Source, SyntheticSource
from publisher.summary import ProgressSnapshot, PublishSummary, lag_summary
from publisher.workload import workload

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 0.5
WARN_EVERY_S = 5.0
FLUSH_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 15.0
MAX_SLEEP_S = 0.05
BATCH = 64
"""Pairs sent between two clock reads; bounds how far a recorded lag can be off."""
_KEPT_ERRORS = 5


def producer_settings(bootstrap: str, config: PublisherConfig) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "acks": config.acks,
        # a retry after a broker restart must not append an input twice (the job would
        # join both copies, a duplicate output no fault of the pipeline); idempotence
        # needs acks=all, so with acks 0 or 1 the user has chosen the risk
        "enable.idempotence": config.acks == "all",
        "linger.ms": config.linger_ms,
        "queue.buffering.max.messages": 1_000_000,
        "queue.buffering.max.kbytes": 1_048_576,
        "message.max.bytes": MAX_MESSAGE_BYTES,  # the faulty-event workload's 1 MiB value
        "delivery.report.only.error": True,
        # librdkafka's own log (reconnect attempts, …) goes through Python logging, not
        # straight to stderr: failures that matter are counted and reported by us
        "logger": logging.getLogger("rdkafka.publisher"),
    }


class _Deliveries:
    """Delivery failures, reported by librdkafka from inside ``poll``/``flush``."""

    def __init__(self) -> None:
        self.errors = 0
        self.first: list[str] = []

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            return
        self.errors += 1
        if len(self.first) < _KEPT_ERRORS:
            self.first.append(f"{msg.topic()}: {err.str()}")


def file_source(config: PublisherConfig) -> ReplaySource | LinesSource | None:
    """The source of ``config``'s replay file, read and checked now (a bad line is an
    error that names it): your own records (``key_field``), else stagebench's or NDW's
    messages; None without a file."""
    if not config.from_file:
        return None
    return LinesSource(config) if config.key_field else ReplaySource(config)


def publish(
    bootstrap: str,
    config: PublisherConfig,
    stop: threading.Event | None = None,
    progress: Callable[[ProgressSnapshot], None] | None = None,
    source: Source | None = None,
) -> PublishSummary:
    """Run the schedule until it ends, ``max_messages`` are sent or ``stop`` is set.

    ``source`` defaults to the replay file's (:func:`file_source`), else synthetic data;
    the faulty-event workload mixes malformed records into it. Returns after the final
    flush.
    """
    sizing = derive(config)
    source = source or file_source(config) or SyntheticSource(config, sizing)
    faulty = (
        FaultySource(source, config.faulty_fraction) if workload(config.workload).faulty else None
    )
    stop = stop or threading.Event()
    deliveries = _Deliveries()
    try:
        producer = Producer(
            client.settings({**producer_settings(bootstrap, config), "on_delivery": deliveries})
        )
    except KafkaException as err:
        raise PublishError(f"cannot create a Kafka producer for {bootstrap}: {err}") from err
    counts = {config.speed_topic: 0, config.flow_topic: 0}

    def produce(topic: str, value: bytes, key: bytes) -> None:
        while True:
            try:
                producer.produce(topic, value, key)
                break
            except BufferError:  # local queue full: let librdkafka drain it
                producer.poll(0.01)
        counts[topic] = counts.get(topic, 0) + 1

    _connect(producer, bootstrap, [config.speed_topic, config.flow_topic])
    loop = _Loop(config, faulty or source, produce, producer, stop, progress, deliveries)
    try:
        loop.run()
    finally:  # what was handed to the client still goes out, even when the run failed
        remaining = producer.flush(FLUSH_TIMEOUT_S)
    end_ms = int(time.time() * 1000)
    sent = sum(counts.values())
    if remaining:
        log.warning("%d messages still undelivered after %.0f s flush", remaining, FLUSH_TIMEOUT_S)
    lag = lag_summary(loop.lags)
    target_rate, locations, lanes = sizing.rate, sizing.locations, sizing.lanes
    replay = None
    if isinstance(source, ReplaySource | LinesSource):  # the file sets the pace and the keys
        target_rate, locations, lanes = 0.0, len(source.locations), len(source.lanes)
        if source.report is not None:
            replay = source.report.to_dict()
            for warning in source.report.warnings():
                log.warning("%s", warning)
    duration = max(loop.elapsed, loop.covered_s)
    return PublishSummary(
        speed_topic=config.speed_topic,
        flow_topic=config.flow_topic,
        workload="replay" if config.from_file else config.workload,
        target_rate=target_rate,
        locations=locations,
        lanes=lanes,
        time_scale=config.time_scale,
        messages=counts,
        delivered=sent - deliveries.errors - remaining,
        delivery_errors=deliveries.errors,
        undelivered=remaining,
        achieved_rate=round(sent / duration, 3) if duration > 0 else 0.0,
        per_second_rates=loop.per_second,
        send_lag_ms=lag,
        behind=lag["max"] > config.behind_warn_ms,
        stopped_early=loop.stopped_early,
        start_ms=loop.start_ms,
        end_ms=end_ms,
        first_errors=deliveries.first,
        replay=replay,
        malformed=None if faulty is None else dict(faulty.sent),
    )


def _connect(producer: Producer, bootstrap: str, topics: list[str]) -> None:
    """Fetch the topics' metadata before the clock starts.

    Otherwise the first sends wait for the connection and metadata, and the
    first second of every run looks slow from the broker's timestamps.
    """
    try:
        for topic in topics:
            producer.list_topics(topic, timeout=CONNECT_TIMEOUT_S)
    except KafkaException as err:
        raise PublishError(f"cannot reach Kafka at {bootstrap}: {err.args[0]}") from err


class _Loop:
    """State of one run of the send loop."""

    def __init__(
        self,
        config: PublisherConfig,
        source: Source,
        produce: Callable[[str, bytes, bytes], None],
        producer: Producer,
        stop: threading.Event,
        progress: Callable[[ProgressSnapshot], None] | None,
        deliveries: _Deliveries,
    ) -> None:
        self.config = config
        self.source = source
        self.produce = produce
        self.producer = producer
        self.stop = stop
        self.progress = progress
        self.deliveries = deliveries
        self.lags = array("d")
        """Send lag of every send, seconds (an array: long runs send millions)."""
        self.per_second: list[int] = []
        self.sent = 0
        self.elapsed = 0.0
        self.covered_s = 0.0
        """Schedule time of the ticks sent completely (the rate's denominator)."""
        self.stopped_early = False
        self.start_ms = 0
        self._t0 = 0.0
        self._next_progress = PROGRESS_EVERY_S
        self._last_progress = (0.0, 0)
        self._interval_lag = 0.0
        self._next_warning = 0.0

    def _start(self) -> None:
        """Wait for the next whole wall-clock second and anchor the monotonic clock to it."""
        start = math.ceil(time.time())
        while (wait := start - time.time()) > 0:
            if self.stop.wait(min(wait, MAX_SLEEP_S)):
                break
        self._t0 = time.perf_counter() - (time.time() - start)
        self.start_ms = start * 1000

    def _clock(self) -> float:
        return time.perf_counter() - self._t0

    def run(self) -> None:
        self._start()
        limit = self.config.max_messages or math.inf
        tick_ms = 1000.0 * self.config.tick_s
        send, lags, per_second = self.source.send, self.lags, self.per_second
        tick = 0
        while not self.stop.is_set() and self.sent < limit:
            offsets = self.source.offsets(tick)
            if offsets is None:
                break
            observation_ts = self.start_ms + round(tick * tick_ms)
            i, n = 0, len(offsets)
            while i < n:
                if self.stop.is_set() or self.sent >= limit:
                    self.stopped_early = self.stop.is_set()
                    break
                now = self._clock()
                if offsets[i] > now:
                    self.producer.poll(0)
                    self._report(now)
                    time.sleep(min(offsets[i] - now, MAX_SLEEP_S))
                    continue
                sent_before = self.sent
                end = min(n, i + BATCH)
                while i < end and offsets[i] <= now and self.sent < limit:
                    due = offsets[i]
                    self.sent += send(
                        self.produce, tick, i, observation_ts, self.start_ms + int(due * 1000)
                    )
                    lags.append(now - due)
                    i += 1
                second = int(now)
                while len(per_second) <= second:
                    per_second.append(0)
                per_second[second] += self.sent - sent_before
                self._interval_lag = max(self._interval_lag, now - offsets[i - 1])
                self.producer.poll(0)
                self._report(now)
            else:
                tick += 1
                self.covered_s = min(self.config.end_s, tick * self.config.tick_s)
                continue
            break
        self.stopped_early = self.stopped_early or self.stop.is_set()
        self.elapsed = self._clock()
        self._report(self.elapsed, force=True)

    def _report(self, now: float, force: bool = False) -> None:
        if now < self._next_progress and not force:
            return
        lag_ms = self._interval_lag * 1000
        behind = lag_ms > self.config.behind_warn_ms
        if behind and now >= self._next_warning:
            log.warning(
                "publisher is %.0f ms behind its schedule: the offered load is lower than "
                "asked (latency starts at the broker's append, so it excludes this delay); "
                "lower the rate",
                lag_ms,
            )
            self._next_warning = now + WARN_EVERY_S
        if self.progress is not None:
            last_t, last_sent = self._last_progress
            span = now - last_t
            self.progress(
                ProgressSnapshot(
                    elapsed_s=now,
                    end_s=self.config.end_s,
                    sent=self.sent,
                    delivery_errors=self.deliveries.errors,
                    rate=(self.sent - last_sent) / span if span > 0 else 0.0,
                    lag_ms=lag_ms,
                    behind=behind,
                )
            )
        self._last_progress = (now, self.sent)
        self._interval_lag = 0.0
        self._next_progress = now + PROGRESS_EVERY_S
