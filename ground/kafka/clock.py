"""Reading the broker's clock: the LogAppendTime of the newest or oldest record of topics."""

import uuid

from confluent_kafka import Consumer, KafkaException, TopicPartition

from ground.errors import BrokerError
from ground.kafka import client

TIMEOUT_S = 10.0


def newest_timestamp(bootstrap: str, topics: list[str]) -> int | None:
    """Largest LogAppendTime (epoch ms) among the last records of every partition.

    None when the topics are empty. Used to mark the end of a run's measured
    period in broker time, so the evaluator cuts inputs and outputs on the
    same clock that stamped them.
    """
    found = _edge_timestamps(bootstrap, topics, newest=True)
    return max(found) if found else None


def oldest_timestamp(bootstrap: str, topics: list[str]) -> int | None:
    """Smallest LogAppendTime (epoch ms) among the first records of every partition.

    None when the topics are empty. On a run's fresh input topics: when, in broker
    time, the publisher's first message was appended (its schedule's start).
    """
    found = _edge_timestamps(bootstrap, topics, newest=False)
    return min(found) if found else None


def _edge_timestamps(bootstrap: str, topics: list[str], newest: bool) -> list[int]:
    """LogAppendTime of the last (``newest``) or first record of every non-empty partition,
    and of any record that followed it while polling (later, so max and min stay right)."""
    consumer = Consumer(
        client.settings(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"stagebench-clock-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "log_level": 0,
            }
        )
    )
    what = "newest" if newest else "oldest"
    try:
        metadata = consumer.list_topics(timeout=TIMEOUT_S)
        wanted = []
        for topic in topics:
            for partition in metadata.topics[topic].partitions:
                low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=TIMEOUT_S
                )
                if high > low:
                    wanted.append(TopicPartition(topic, partition, high - 1 if newest else low))
        found: list[int] = []
        if not wanted:
            return found
        consumer.assign(wanted)
        pending = {(tp.topic, tp.partition) for tp in wanted}
        for _ in range(50):
            if not pending:
                break
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            pending.discard((msg.topic(), msg.partition()))
            found.append(msg.timestamp()[1])
        return found
    except (KafkaException, KeyError) as err:
        raise BrokerError(f"cannot read the {what} timestamps of {topics}: {err}") from err
    finally:
        consumer.close()
