"""``stagebench smoke``: the whole chain in half a minute.

Broker reachable → fresh LogAppendTime topics → produce → the engine reads them
back through its Kafka connector and sees LogAppendTime (Spark: ``timestampType`` 1).
"""

import argparse
import time

from engines import registry
from ground.errors import EngineError
from ground.kafka import client
from ground.kafka.naming import new_run_id
from stagebench.cli.shared import Subparsers, add_bootstrap


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "smoke",
        help="check the whole chain: broker, topics, Spark reads Kafka",
        description="Produce a few records to a fresh topic and read them back with Spark's "
        "Kafka connector, checking that the broker stamped them (LogAppendTime).",
    )
    add_bootstrap(parser)
    parser.add_argument(
        "--messages", type=int, default=100, help="records to produce (default: %(default)s)"
    )
    parser.add_argument("--master", default="local[2]", help="Spark master (default: %(default)s)")
    parser.add_argument(
        "--engine",
        default=registry.smoke_default(),
        choices=[found.name for found in registry.engines() if found.smoke],
        help="the engine that reads the records back (default: %(default)s)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Producer

    from ground.kafka.topics import check_topics, create_topics, delete_topics
    from stagebench.run.bootstrap import resolve

    began = time.monotonic()
    engine = registry.engine(args.engine)
    read_back = registry.smoke(engine)
    bootstrap = resolve(args.bootstrap)
    topic = f"stagebench-smoke-{new_run_id()}"
    create_topics(bootstrap, [topic])
    try:
        check_topics(bootstrap, [topic])
        producer = Producer(client.settings({"bootstrap.servers": bootstrap, "linger.ms": 0}))
        for i in range(args.messages):
            producer.produce(topic, key=str(i).encode(), value=b'{"smoke": %d}' % i)
        if producer.flush(30):
            raise EngineError("not every smoke record was delivered within 30 s")
        print(f"Kafka at {bootstrap}: {args.messages} records written to {topic}")
        records, version = read_back(bootstrap, topic, args.master)
    finally:
        delete_topics(bootstrap, [topic])
    types = {t for t, _ in records}
    if len(records) != args.messages or types != {TIMESTAMP_LOG_APPEND_TIME}:
        raise EngineError(
            f"{engine.title} read {len(records)} of {args.messages} records with timestamp "
            f"types {sorted(types)}; expected all LogAppendTime ({TIMESTAMP_LOG_APPEND_TIME})"
        )
    print(
        f"{engine.title} {version} read all {len(records)} records back with LogAppendTime "
        f"timestamps; smoke test passed in {time.monotonic() - began:.1f} s"
    )
    return 0
