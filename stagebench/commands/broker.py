"""``stagebench broker start|stop|status``: the embedded Kafka broker or cluster."""

import json
import sys
import time

from ground.kafka.broker import BrokerState, EmbeddedBroker


def start(args) -> int:
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


def stop(args) -> int:
    if EmbeddedBroker().stop():
        print("embedded broker stopped; its data is deleted")
    else:
        print("no embedded broker is running")
    return 0


def status(args) -> int:
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


def _describe(state: BrokerState) -> str:
    pids = ", ".join(str(p) for p in state.pids)
    if len(state.nodes) == 1:
        return f"Kafka {state.kafka_version} at {state.bootstrap} (pid {pids})"
    return (f"{len(state.nodes)}-broker Kafka {state.kafka_version} cluster at {state.bootstrap} "
            f"(pids {pids})")  # fmt: skip
