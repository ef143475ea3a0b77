"""``stagebench broker start|stop|status``: the embedded Kafka broker or cluster."""

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from ground.kafka import MAX_BROKERS
from stagebench.cli.shared import Subparsers, flag

JSON_STATE = "print the broker state as JSON (default: text)"

if TYPE_CHECKING:  # confluent-kafka and psutil, which --help leaves alone
    from ground.kafka.broker_state import BrokerState


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "broker",
        help="start, stop or inspect the embedded Kafka broker",
        description="A real Apache Kafka (KRaft) on 127.0.0.1 for machines without Docker or a "
        "Kafka of their own: one node, or a cluster of several (--brokers). Its jars are "
        "downloaded from Maven Central on first use, checked against pinned SHA-1s, and "
        "cached under ~/.cache/stagebench.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start_parser = actions.add_parser("start", help="start the broker (reuses a running one)")
    start_parser.add_argument(
        "--brokers",
        type=int,
        default=1,
        help=f"nodes, ids 1..N, each a broker and a controller of one quorum, with its own "
        f"ports, data and logs (1 to {MAX_BROKERS}; default: %(default)s)",
    )
    start_parser.add_argument(
        "--port", type=int, help="node 1's listener port (default: a free port)"
    )
    start_parser.add_argument(
        "--heap", help="JVM heap per node, fixed (default: 1G, 512M each for several nodes)"
    )
    flag(start_parser, "--json", JSON_STATE)
    start_parser.set_defaults(handler=start)
    stop_parser = actions.add_parser("stop", help="stop the broker and delete its data")
    stop_parser.set_defaults(handler=stop)
    status_parser = actions.add_parser("status", help="is it running, where, which version")
    flag(status_parser, "--json", JSON_STATE)
    status_parser.set_defaults(handler=status)


def start(args: argparse.Namespace) -> int:
    from ground.kafka.broker import EmbeddedBroker

    broker = EmbeddedBroker(port=args.port, heap=args.heap, brokers=args.brokers)
    running = broker.status()
    began = time.monotonic()
    state = broker.start()
    if args.json:
        print(json.dumps({"running": True, **state.as_json()}))
    elif running:
        print(f"already running: {_describe(state)}")
    else:
        print(f"{_describe(state)}; started in {time.monotonic() - began:.1f} s, "
              f"logs in {state.home}")  # fmt: skip
    return 0


def stop(args: argparse.Namespace) -> int:
    from ground.kafka.broker import EmbeddedBroker

    if EmbeddedBroker().stop():
        print("embedded broker stopped; its data is deleted")
    else:
        print("no embedded broker is running")
    return 0


def status(args: argparse.Namespace) -> int:
    from ground.kafka.broker import EmbeddedBroker

    state = EmbeddedBroker().status()
    if args.json:
        print(json.dumps({"running": True, **state.as_json()} if state else {"running": False}))
    elif state:
        print(f"running: {_describe(state)}")
        if len(state.nodes) > 1:
            for n in state.nodes:
                print(f"  node {n.node_id}: {n.bootstrap} "
                      f"{f'pid {n.pid}' if n.running else 'stopped'}")  # fmt: skip
    else:
        print("no embedded broker is running", file=sys.stderr)
    return 0 if state else 3


def _describe(state: "BrokerState") -> str:
    pids = ", ".join(str(p) for p in state.pids)
    if len(state.nodes) == 1:
        return f"Kafka {state.kafka_version} at {state.bootstrap} (pid {pids})"
    return (f"{len(state.nodes)}-broker Kafka {state.kafka_version} cluster at {state.bootstrap} "
            f"(pids {pids})")  # fmt: skip
