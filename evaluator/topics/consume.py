"""Consuming a topic from Kafka in large batches, exactly between offsets fixed at the start.

Every partition is read from its earliest offset (or from the first record stamped at
or after a broker time) up to the end offsets taken when reading starts: nothing
produced before is left behind, nothing produced later is mixed in. Messages are
fetched in large batches (``consume(num_messages=…)``) with a bounded prefetch;
:func:`evaluator.topics.reader.read_topic` parses and stores them.
"""

import itertools
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from confluent_kafka import Consumer, KafkaException, TopicPartition

from ground.errors import EvaluationError
from ground.kafka import client

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Batch:
    """Raw columns of one consumed batch, restricted to offsets below the end offsets."""

    partition: np.ndarray
    offset: np.ndarray
    timestamp: np.ndarray
    timestamp_type: np.ndarray
    values: list
    total: int
    """Records between the start and end offsets: an upper bound of the topic's count."""


def _consumer(bootstrap: str) -> Consumer:
    return Consumer(
        client.settings(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"stagebench-evaluator-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                # bounded prefetch: larger buffers read no faster here but cost
                # gigabytes of resident memory on a 10 M record topic
                "fetch.max.bytes": 8 * 1024 * 1024,
                "max.partition.fetch.bytes": 4 * 1024 * 1024,
                "queued.max.messages.kbytes": 8 * 1024,
                "fetch.wait.max.ms": 50,
            }
        )
    )


def end_offsets(consumer: Consumer, topic: str) -> dict[int, tuple[int, int]]:
    """Per partition of ``topic``: its low and high watermark offsets now."""
    try:
        meta = consumer.list_topics(topic, timeout=10)
    except KafkaException as err:
        raise EvaluationError(f"cannot read metadata of topic {topic!r}: {err}") from err
    tmeta = meta.topics.get(topic)
    if tmeta is None or tmeta.error is not None or not tmeta.partitions:
        raise EvaluationError(f"topic {topic!r} does not exist or has no partitions")
    offsets = {}
    for p in sorted(tmeta.partitions):
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        offsets[p] = (low, high)
    return offsets


def iter_batches(
    bootstrap: str,
    topic: str,
    batch_size: int = 50_000,
    idle_timeout_s: float = 30.0,
    from_ms: int | None = None,
) -> Iterator[Batch]:
    """Yield the topic's records in batches, from earliest (or the first record stamped
    at or after ``from_ms``) to the end offsets at start."""
    consumer = _consumer(bootstrap)
    try:
        ranges = end_offsets(consumer, topic)
        if from_ms is not None:
            ranges = _offsets_from(consumer, topic, ranges, from_ms)
        pending = {p: high for p, (low, high) in ranges.items() if high > low}
        total = sum(h - lo for lo, h in ranges.values())
        log.info("reading %s: %d records in %d partitions", topic, total, len(ranges))
        if not pending:
            return
        consumer.assign([TopicPartition(topic, p, ranges[p][0]) for p in pending])
        last_progress = time.monotonic()
        # consume() returns once it has num_messages or its timeout passed: asked for no
        # more than are left to the end offsets, it returns the last batch as soon as it
        # is here instead of waiting the timeout out (0.5 s per topic, three per run); a
        # transaction marker counted as a record only brings the timeout back
        left = total
        while pending:
            msgs = consumer.consume(num_messages=max(1, min(batch_size, left)), timeout=0.5)
            left -= len(msgs)
            if not msgs:
                # a partition can end on an offset with no record (transaction marker)
                for tp in consumer.position([TopicPartition(topic, p) for p in pending]):
                    if tp.offset >= pending[tp.partition]:
                        del pending[tp.partition]
                if not pending:
                    break
                if time.monotonic() - last_progress > idle_timeout_s:
                    raise EvaluationError(
                        f"topic {topic!r}: no records for {idle_timeout_s:.0f} s while "
                        f"partitions {sorted(pending)} are not read to their end offsets"
                    )
                continue
            last_progress = time.monotonic()
            errors = [m.error() for m in msgs if m.error() is not None]
            if errors:
                raise EvaluationError(f"reading topic {topic!r} failed: {errors[0]}")
            pairs = itertools.chain.from_iterable(m.timestamp() for m in msgs)
            ts = np.fromiter(pairs, np.int64, 2 * len(msgs)).reshape(-1, 2)
            partition = np.fromiter((m.partition() for m in msgs), np.int32, len(msgs))
            offset = np.fromiter((m.offset() for m in msgs), np.int64, len(msgs))
            values = [m.value() for m in msgs]
            keep = _below_end(partition, offset, pending, consumer, topic)
            if keep is not None:
                values = [v for v, k in zip(values, keep, strict=True) if k]
                partition, offset, ts = partition[keep], offset[keep], ts[keep]
            yield Batch(partition, offset, ts[:, 1], ts[:, 0].astype(np.int8), values, total)
    finally:
        consumer.close()


def _offsets_from(
    consumer: Consumer, topic: str, ranges: dict[int, tuple[int, int]], from_ms: int
) -> dict[int, tuple[int, int]]:
    """``ranges`` starting at each partition's first record stamped at or after ``from_ms``
    (at its end when it has none)."""
    wanted = [TopicPartition(topic, p, from_ms) for p in ranges]
    try:
        found = consumer.offsets_for_times(wanted, timeout=10)
    except KafkaException as err:
        raise EvaluationError(f"cannot look up offsets by time in topic {topic!r}: {err}") from err
    errors = [tp.error for tp in found if tp.error is not None]
    if errors:
        raise EvaluationError(f"cannot look up offsets by time in topic {topic!r}: {errors[0]}")
    return {
        tp.partition: (ranges[tp.partition][1] if tp.offset < 0 else tp.offset,
                       ranges[tp.partition][1])
        for tp in found
    }  # fmt: skip


def _below_end(
    partition: np.ndarray,
    offset: np.ndarray,
    pending: dict[int, int],
    consumer: Consumer,
    topic: str,
) -> np.ndarray | None:
    """Mark partitions read to their end (and pause them); mask of records to keep."""
    keep = None
    for p in np.unique(partition):
        p = int(p)
        end = pending.get(p)
        mask = partition == p
        top = int(offset[mask].max())
        if end is None or top >= end:
            keep = np.ones(len(offset), bool) if keep is None else keep
            keep[mask & (offset >= (end if end is not None else 0))] = False
        if end is not None and top >= end - 1:
            del pending[p]
            consumer.pause([TopicPartition(topic, p)])
    return keep
