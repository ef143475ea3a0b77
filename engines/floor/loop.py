"""The floor of the latency ladder: the ingest stage without Spark.

A bare Kafka consume → produce loop (confluent-kafka) copies every record of the
input topics to the output topic, each output in exactly the shape Spark's
ingest stage writes (:func:`engines.spark.transforms.ingest` through
:func:`engines.spark.sink.output_value`): run id, source topic, partition and
offset, the input's broker timestamp as ``input_ts_latest`` and
``input_ts_earliest``, ``input_count`` 1 and the input value spliced in
unchanged as ``record``; no key (ingest has no location id column). The
evaluator therefore measures a floor run as stage ``ingest``, with the same
broker-clock method (docs/method.md#latency): output LogAppendTime − input LogAppendTime.
What remains is the Kafka round trip plus one Python hop, the floor below
every Spark stage.

A run starts ``python -m engines.floor.loop --config RUN_DIR/pipeline.json`` in
place of the Spark job (:func:`main`, through :mod:`engines.process`); like
the job it creates ``pipeline.ready`` once it reads its inputs and writes
progress events to ``engine_progress.jsonl``, from which the run tells that it
has drained.
"""

import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from engines import process
from engines.config import IDLE_PROGRESS_MS, PipelineConfig
from engines.floor import ENGINE
from ground import rundir
from ground.contract import (
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    RECORD,
    RUN_ID,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
)
from ground.errors import BrokerError, ConfigError, TopicError
from ground.kafka import MAX_MESSAGE_BYTES, client

log = logging.getLogger(__name__)

POLL_TIMEOUT_S = 0.1
"""Longest wait for the first record of a batch: how late ``stop`` is noticed."""
MAX_BATCH = 1000
"""Records taken from the consumer's queue at once (only what has already arrived)."""
METADATA_TIMEOUT_S = 15.0
FLUSH_TIMEOUT_S = 10.0
PROGRESS_EVERY_S = IDLE_PROGRESS_MS / 1000
"""As often as an idle Spark query reports, so the floor's drain takes as long as a
Spark stage's."""
_TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: "CreateTime", TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}


@dataclass(frozen=True)
class FloorStats:
    """What one floor run copied."""

    copied: int
    """Outputs the broker acknowledged: one per input record."""
    malformed: int
    """Inputs whose value is not JSON: copied all the same, as Spark's ingest does (their
    output embeds the bad value, and the evaluator's ingest reader recovers its fields)."""


def consumer_settings(bootstrap: str, run_id: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        # partitions are assigned, not subscribed: the group id is required, never joined
        "group.id": f"stagebench-floor-{run_id}-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        # the broker answers a fetch as soon as one byte is there, so the wait only
        # bounds idle fetches (1, 5, 100 and 500 ms all gave p50 1 ms here); a short one
        # stays close to Kafka's EndToEndLatency tool (0) without a busy fetch loop
        "fetch.min.bytes": 1,
        "fetch.wait.max.ms": 5,
        "socket.nagle.disable": True,
        "logger": logging.getLogger("rdkafka.floor"),
    }


def producer_settings(bootstrap: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        # send each record at once; librdkafka's default (5 ms) would add up to 5 ms
        "linger.ms": 0,
        # the latency ends at the leader's LogAppendTime, stamped on append before any
        # replication: waiting for followers (acks=all, the default) cannot change a
        # measured timestamp, it only delays our own delivery reports
        "acks": 1,
        # a missing output topic is an error, not one the broker creates with defaults
        "allow.auto.create.topics": False,
        # an input of 1 MiB (the faulty-event workload) is copied too, with its envelope
        "message.max.bytes": MAX_MESSAGE_BYTES,
        "socket.nagle.disable": True,
        "logger": logging.getLogger("rdkafka.floor"),
    }


class IngestEncoder:
    """Output values in the bytes Spark's ingest stage writes, one template per topic.

    Spark's ``to_json`` writes the fields compactly in column order, then the sink
    splices the input value in as text; a null input value makes the whole output
    null. Topic names and run ids are plain ASCII, where Python's and Jackson's
    JSON string escaping agree.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._templates: dict[str, bytes] = {}

    def _template(self, topic: str) -> bytes:
        head = json.dumps({RUN_ID: self.run_id, SOURCE_TOPIC: topic}, separators=(",", ":"))
        numbers = (SOURCE_PARTITION, SOURCE_OFFSET, INPUT_TS_LATEST, INPUT_TS_EARLIEST)
        template = (
            head[:-1].replace("%", "%%")
            + "".join(f",{json.dumps(name)}:%d" for name in numbers)
            + f",{json.dumps(INPUT_COUNT)}:1,{json.dumps(RECORD)}:"
        )
        return template.encode()

    def value(
        self, topic: str, partition: int, offset: int, timestamp: int, record: bytes | None
    ) -> bytes | None:
        if record is None:
            return None
        template = self._templates.get(topic)
        if template is None:
            template = self._templates[topic] = self._template(topic)
        return template % (partition, offset, timestamp, timestamp) + record + b"}"


class _Deliveries:
    """Delivery reports, served by librdkafka inside ``poll``/``flush``."""

    def __init__(self, output_topic: str) -> None:
        self.output_topic = output_topic
        self.delivered = 0
        self.failed: list[str] = []
        self.wrong_type: int | None = None

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.failed.append(err.str())
            return
        self.delivered += 1
        ts_type = msg.timestamp()[0]
        if ts_type != TIMESTAMP_LOG_APPEND_TIME and self.wrong_type is None:
            self.wrong_type = ts_type

    def check(self) -> None:
        if self.wrong_type is not None:
            raise TopicError(
                f"output topic {self.output_topic!r} stamps records with "
                f"{_TIMESTAMP_TYPES.get(self.wrong_type, self.wrong_type)}, not LogAppendTime: "
                "its timestamps are not the broker's clock: refusing to measure"
            )
        if self.failed:
            raise BrokerError(
                f"{len(self.failed)} outputs to {self.output_topic!r} were not delivered "
                f"(first: {self.failed[0]})"
            )


def run_floor(
    bootstrap: str,
    input_topics: Sequence[str],
    output_topic: str,
    run_id: str,
    stop: threading.Event,
    on_ready: Callable[[], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> FloorStats:
    """Copy every record of ``input_topics`` to ``output_topic`` until ``stop`` is set.

    Partitions are assigned from the topics' metadata, each from its earliest
    offset (like the Spark job's ``startingOffsets=earliest``), without a consumer
    group: readiness needs no group join and a run never pauses for a rebalance,
    as Spark's Kafka source assigns its partitions itself. ``on_ready`` is called
    once that assignment is made and both clients have reached the broker;
    ``on_batch(n)`` after each turn of the loop with the records it copied (0 when
    none arrived).

    Raises TopicError when an input record or an output is not stamped with
    LogAppendTime (docs/method.md#clock), BrokerError when Kafka fails; after ``stop`` the
    producer is flushed (at most ``FLUSH_TIMEOUT_S``) and the consumer closed.
    """
    consumer = Consumer(client.settings(consumer_settings(bootstrap, run_id)))
    try:
        producer = Producer(client.settings(producer_settings(bootstrap)))
        deliveries = _Deliveries(output_topic)
        consumer.assign(_input_partitions(consumer, input_topics))
        _partitions(producer, output_topic)  # reaches the broker and caches its metadata
        log.info("floor: copying %s to %s", ", ".join(input_topics), output_topic)
        if on_ready is not None:
            on_ready()
        malformed = _copy(
            consumer, producer, deliveries, IngestEncoder(run_id), stop, on_batch or _ignore
        )
        remaining = producer.flush(FLUSH_TIMEOUT_S)
        deliveries.check()
        if remaining:
            raise BrokerError(
                f"{remaining} outputs to {output_topic!r} still undelivered after "
                f"{FLUSH_TIMEOUT_S:.0f} s"
            )
    finally:
        consumer.close()
    stats = FloorStats(copied=deliveries.delivered, malformed=malformed)
    log.info("floor: %d records copied, %d malformed", stats.copied, stats.malformed)
    return stats


def _copy(
    consumer: Consumer,
    producer: Producer,
    deliveries: _Deliveries,
    encoder: IngestEncoder,
    stop: threading.Event,
    on_batch: Callable[[int], None],
) -> int:
    """The loop: produce each arrived record's output at once; the malformed count."""
    malformed = 0
    output_topic = deliveries.output_topic
    while not stop.is_set():
        # poll returns with the first record; consume(timeout=0) then takes the records
        # already queued behind it. consume(n, timeout) alone returns only when n records
        # are there or the timeout has passed: with 0.1 s that measured p50 51 ms here
        first = consumer.poll(POLL_TIMEOUT_S)
        if first is None:
            producer.poll(0)
            deliveries.check()
            on_batch(0)
            continue
        batch = [first, *consumer.consume(num_messages=MAX_BATCH - 1, timeout=0)]
        for msg in batch:
            value = encoder.value(*_identity(msg), msg.value())
            _produce(producer, output_topic, value, deliveries)
        producer.poll(0)
        deliveries.check()
        # counted after the outputs are on their way: not on the latency path
        malformed += sum(1 for msg in batch if not _is_json(msg.value()))
        on_batch(len(batch))
    return malformed


def _ignore(_: int) -> None:
    pass


class _Progress:
    """Progress events as the Spark job's listener writes them: rows per interval."""

    def __init__(self, path: Path, every_s: float = PROGRESS_EVERY_S):
        self._path, self._every = path, every_s
        self._rows = 0
        self._next = time.monotonic() + every_s

    def __call__(self, rows: int) -> None:
        self._rows += rows
        if time.monotonic() < self._next:
            return
        event = {
            "event": "progress",
            "time_ms": int(time.time() * 1000),
            "numInputRows": self._rows,
        }
        with self._path.open("a") as out:
            out.write(json.dumps(event) + "\n")
        self._rows = 0
        self._next = time.monotonic() + self._every


def run(
    config: PipelineConfig,
    run_dir: Path,
    max_seconds: float | None,
    stop: threading.Event,
    resume: bool = False,
) -> int:
    """The floor as a run's job: ready file, progress events, until ``stop``."""
    ENGINE.check(config.stage, config.impl, config.trigger)
    if resume:
        raise ConfigError("the floor keeps no checkpoint to resume from")
    run_dir.mkdir(parents=True, exist_ok=True)
    if max_seconds is not None:
        threading.Timer(max_seconds, stop.set).start()
    run_floor(
        config.bootstrap,
        (config.speed_topic, config.flow_topic),
        config.output_topic,
        config.run_id,
        stop,
        on_ready=(run_dir / rundir.READY).touch,
        on_batch=_Progress(run_dir / rundir.PROGRESS),
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.floor.loop --config RUN_DIR/pipeline.json``."""
    return process.main(run, "engines.floor.loop", "Run the floor: Kafka in, Kafka out.", argv)


def _identity(msg: Message) -> tuple[str, int, int, int]:
    """(topic, partition, offset, broker timestamp) of an input record."""
    err = msg.error()
    if err is not None:
        raise BrokerError(f"consuming {msg.topic()!r} failed: {err.str()}")
    ts_type, timestamp = msg.timestamp()
    if ts_type != TIMESTAMP_LOG_APPEND_TIME:
        raise TopicError(
            f"input record {msg.topic()}[{msg.partition()}]@{msg.offset()} is stamped with "
            f"{_TIMESTAMP_TYPES.get(ts_type, ts_type)}, not LogAppendTime: its timestamp is "
            "not the broker's clock, refusing to measure (docs/method.md#clock)"
        )
    topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
    # a consumed record without an error has all three
    assert topic is not None and partition is not None and offset is not None
    return topic, partition, offset, timestamp


def _produce(producer: Producer, topic: str, value: bytes | None, deliveries: _Deliveries) -> None:
    while True:
        try:
            producer.produce(topic, value=value, on_delivery=deliveries)
            return
        except BufferError:
            producer.poll(0.05)  # queue full: let delivery reports drain it


def _is_json(value: bytes | None) -> bool:
    if value is None:
        return False
    try:
        json.loads(value)
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def _partitions(client: Consumer | Producer, topic: str) -> list[int]:
    try:
        metadata = client.list_topics(topic, timeout=METADATA_TIMEOUT_S)
    except KafkaException as err:
        raise BrokerError(f"cannot read the metadata of topic {topic!r}: {err}") from err
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        reason = found.error.str() if found is not None and found.error else "no partitions"
        raise TopicError(f"topic {topic!r} cannot be used: {reason}")
    return sorted(found.partitions)


def _input_partitions(consumer: Consumer, topics: Sequence[str]) -> list[TopicPartition]:
    if not topics:
        raise TopicError("the floor needs at least one input topic")
    return [
        TopicPartition(topic, p, OFFSET_BEGINNING)
        for topic in topics
        for p in _partitions(consumer, topic)
    ]


if __name__ == "__main__":
    sys.exit(main())
