"""A pipeline of your own, measured by stagebench: the parse stage as a plain Kafka
consume → produce loop, with no engine (docs/own-pipeline.md).

It reads every record of the input topics, parses its JSON value and writes one output
per valid observation to the output topic. Each output carries what
``stagebench evaluate --stage parse`` needs to match and measure it:

- its identity: ``source_topic``, ``source_partition``, ``source_offset`` of the input;
- ``input_ts_latest``, ``input_ts_earliest``: the input's broker timestamp (its
  LogAppendTime), and ``input_count`` 1;
- the parsed fields, of which the evaluator checks ``speed`` and ``flow``.

It stops once no record has come for ``--idle`` seconds after the first one.

    python docs/examples/parse_job.py --bootstrap HOST:PORT --inputs speed,flow --output parsed
"""

import argparse
import json
import time

from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer, Producer
from confluent_kafka import TopicPartition as Partition


def parsed(value: bytes | None) -> dict[str, object] | None:
    """The observation in ``value``, or None when it is no JSON object with a speed or
    a flow (a malformed input has no output in the parse stage)."""
    try:
        record = json.loads(value or b"")
    except ValueError:
        return None
    if not isinstance(record, dict) or ("speed" in record) == ("flow" in record):
        return None
    return record


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    args.add_argument("--inputs", required=True, help="comma-separated input topics")
    args.add_argument("--output", required=True, help="output topic")
    args.add_argument("--idle", type=float, default=10.0, help="seconds without input to stop")
    opts = args.parse_args()

    consumer = Consumer(
        {"bootstrap.servers": opts.bootstrap, "group.id": "parse-job", "enable.auto.commit": False}
    )
    producer = Producer({"bootstrap.servers": opts.bootstrap, "linger.ms": 0})
    topics = consumer.list_topics(timeout=15).topics
    consumer.assign(
        [
            Partition(topic, p, OFFSET_BEGINNING)
            for topic in opts.inputs.split(",")
            for p in topics[topic].partitions
        ]
    )
    last = None
    while last is None or time.monotonic() - last < opts.idle:
        msg = consumer.poll(0.1)
        if msg is None or msg.error():
            continue
        last = time.monotonic()
        kind, appended = msg.timestamp()
        if kind != TIMESTAMP_LOG_APPEND_TIME:
            raise SystemExit(f"{msg.topic()} is not a LogAppendTime topic")
        record = parsed(msg.value())
        if record is None:
            continue
        output = {
            "source_topic": msg.topic(),
            "source_partition": msg.partition(),
            "source_offset": msg.offset(),
            **record,
            "input_ts_latest": appended,
            "input_ts_earliest": appended,
            "input_count": 1,
        }
        producer.produce(opts.output, json.dumps(output).encode())
        producer.poll(0)
    producer.flush(10)
    consumer.close()


if __name__ == "__main__":
    main()
