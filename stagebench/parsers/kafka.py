"""The parsers of the commands that set up and check Kafka: broker, topics, smoke."""

from engines.registry import NAMES, engine
from ground.kafka import MAX_BROKERS
from stagebench.parsers.shared import Subparsers, add_bootstrap, flag, handler

JSON_STATE = "print the broker state as JSON (default: text)"


def broker(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "broker",
        help="start, stop or inspect the embedded Kafka broker",
        description="A real Apache Kafka (KRaft) on 127.0.0.1 for machines without Docker or a "
        "Kafka of their own: one node, or a cluster of several (--brokers). Its jars are "
        "resolved from Maven Central with PySpark's Ivy on first use and cached under "
        "~/.cache/stagebench.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start the broker (reuses a running one)")
    start.add_argument(
        "--brokers",
        type=int,
        default=1,
        help=f"nodes, ids 1..N, each a broker and a controller of one quorum, with its own "
        f"ports, data and logs (1 to {MAX_BROKERS}; default: %(default)s)",
    )
    start.add_argument("--port", type=int, help="node 1's listener port (default: a free port)")
    start.add_argument(
        "--heap", help="JVM heap per node, fixed (default: 1G, 512M each for several nodes)"
    )
    flag(start, "--json", JSON_STATE)
    handler(start, "broker:start")
    stop = actions.add_parser("stop", help="stop the broker and delete its data")
    handler(stop, "broker:stop")
    status = actions.add_parser("status", help="is it running, where, which version")
    flag(status, "--json", JSON_STATE)
    handler(status, "broker:status")


def topics(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "topics",
        help="create or check benchmark topics (LogAppendTime, leader)",
        description="Benchmark topics use message.timestamp.type=LogAppendTime and have every "
        "partition led by one broker, so all timestamps come from one clock "
        "(docs/method.md#clock).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("create", "create the speed, flow and output topics of a run"),
        ("check", "verify timestamp type and leaders; exit 1 on any problem"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "names",
            nargs="*",
            metavar="TOPIC",
            help="topic names (default: the speed, flow and output topics of --run-id)",
        )
        action.add_argument("--run-id", help="run whose topics to use (create: default a new id)")
        action.add_argument(
            "--leader", type=int, help="broker id that must lead every partition (default: lowest)"
        )
        add_bootstrap(action)
        handler(action, f"topics:{name}")
    create = actions.choices["create"]
    create.add_argument(
        "--partitions", type=int, default=1, help="partitions per topic (default: %(default)s)"
    )
    create.add_argument(
        "--replication",
        type=int,
        help="replicas per partition, min.insync.replicas one less "
        "(default: the broker count, at most 3)",
    )


def smoke(sub: Subparsers) -> None:
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
        default="spark",
        choices=[name for name in NAMES if engine(name).smoke],
        help="the engine that reads the records back (default: %(default)s)",
    )
    handler(parser, "smoke:run")
