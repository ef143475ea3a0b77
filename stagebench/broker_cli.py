"""``stagebench broker start|stop|status``: the embedded Kafka broker."""

import json
import sys
import time
from dataclasses import asdict


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "broker",
        help="start, stop or inspect the embedded Kafka broker",
        description="A real single-node Apache Kafka (KRaft) on 127.0.0.1 for machines without "
        "Docker or a Kafka of their own. Its jars are resolved from Maven Central with "
        "PySpark's Ivy on first use and cached under ~/.cache/stagebench.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start the broker (reuses a running one)")
    start.add_argument("--port", type=int, help="listener port (default: a free port)")
    start.add_argument("--heap", default="1G", help="JVM heap, fixed (default: %(default)s)")
    start.add_argument("--json", action="store_true", help="print the broker state as JSON")
    start.set_defaults(func=_start)
    stop = actions.add_parser("stop", help="stop the broker and delete its data")
    stop.set_defaults(func=_stop)
    status = actions.add_parser("status", help="is it running, where, which version")
    status.add_argument("--json", action="store_true", help="print the broker state as JSON")
    status.set_defaults(func=_status)


def _start(args) -> int:
    from stagebench.broker import EmbeddedBroker

    broker = EmbeddedBroker(port=args.port, heap=args.heap)
    running = broker.status()
    began = time.monotonic()
    state = broker.start()
    if args.json:
        print(json.dumps({"running": True, **asdict(state)}))
    elif running:
        print(f"Kafka {state.kafka_version} already running at {state.bootstrap} (pid {state.pid})")
    else:
        print(
            f"Kafka {state.kafka_version} running at {state.bootstrap} (pid {state.pid}, "
            f"started in {time.monotonic() - began:.1f} s, logs in {state.log_dir})"
        )
    return 0


def _stop(args) -> int:
    from stagebench.broker import EmbeddedBroker

    if EmbeddedBroker().stop():
        print("embedded broker stopped; its data is deleted")
    else:
        print("no embedded broker is running")
    return 0


def _status(args) -> int:
    from stagebench.broker import EmbeddedBroker

    state = EmbeddedBroker().status()
    if args.json:
        print(json.dumps({"running": True, **asdict(state)} if state else {"running": False}))
    elif state:
        print(f"running: Kafka {state.kafka_version} at {state.bootstrap} (pid {state.pid})")
    else:
        print("no embedded broker is running", file=sys.stderr)
    return 0 if state else 3
