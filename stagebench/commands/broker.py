"""``stagebench broker start|stop|status``: the embedded Kafka broker."""

import json
import sys
import time
from dataclasses import asdict

from ground.kafka.broker import EmbeddedBroker


def start(args) -> int:
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


def stop(args) -> int:
    if EmbeddedBroker().stop():
        print("embedded broker stopped; its data is deleted")
    else:
        print("no embedded broker is running")
    return 0


def status(args) -> int:
    state = EmbeddedBroker().status()
    if args.json:
        print(json.dumps({"running": True, **asdict(state)} if state else {"running": False}))
    elif state:
        print(f"running: Kafka {state.kafka_version} at {state.bootstrap} (pid {state.pid})")
    else:
        print("no embedded broker is running", file=sys.stderr)
    return 0 if state else 3
