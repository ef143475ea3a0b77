"""Reading the broker's clock: the LogAppendTime of the newest record of topics."""

import uuid

from confluent_kafka import Consumer, KafkaException, TopicPartition

from ground.errors import BrokerError

TIMEOUT_S = 10.0


def newest_timestamp(bootstrap: str, topics: list[str]) -> int | None:
    """Largest LogAppendTime (epoch ms) among the last records of every partition.

    None when the topics are empty. Used to mark the end of a run's measured
    period in broker time, so the evaluator cuts inputs and outputs on the
    same clock that stamped them.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"stagebench-clock-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    try:
        metadata = consumer.list_topics(timeout=TIMEOUT_S)
        wanted = []
        for topic in topics:
            for partition in metadata.topics[topic].partitions:
                low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=TIMEOUT_S
                )
                if high > low:
                    wanted.append(TopicPartition(topic, partition, high - 1))
        if not wanted:
            return None
        consumer.assign(wanted)
        newest: int | None = None
        pending = {(tp.topic, tp.partition) for tp in wanted}
        for _ in range(50):
            if not pending:
                break
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            pending.discard((msg.topic(), msg.partition()))
            ts = msg.timestamp()[1]
            newest = ts if newest is None else max(newest, ts)
        return newest
    except (KafkaException, KeyError) as err:
        raise BrokerError(f"cannot read the newest timestamps of {topics}: {err}") from err
    finally:
        consumer.close()
