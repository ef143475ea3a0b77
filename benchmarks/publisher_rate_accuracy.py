"""How exactly the publisher keeps its rate, second by second of broker time.

The tests check the rate over the whole run and against the publisher's own
schedule (a busy machine moves a few records across a second boundary); this
script measures what they no longer assert: the records appended in each broker
second (LogAppendTime), counted from the publisher's start, against the schedule.
Three workloads, each on fresh topics:

- ``constant``: 5 000 msg/s for 10 s; target: seconds 1–9 within ±2 %;
- ``periodic-burst``: 400 msg/s plus a 4 000-message burst every 3 s, spread
  over 0.5 s, for 7 s; target: seconds 3 and 6 at least 4 000, seconds 1, 2, 4
  and 5 within ±20 of 400;
- ``single-burst``: 3 s at 4 000 msg/s, then 3 s at 400; target: seconds 1 and
  2 within ±80 of 4 000, seconds 4 and 5 within ±20 of 400.

A warm-up publish (``--warmup-s``, 5 s at 5 000 msg/s, to throwaway topics)
comes first: a broker started seconds ago appends the first second's records
late (JIT compilation), which would be counted against the publisher. Run it on
a quiet machine. The last line printed is one JSON object:
``{"<workload>": {"broker_per_second": […], "scheduled_per_second": […],
"worst_deviation": …, "met": true|false}, …, "all_met": …}``; the exit code is
0 either way.

    python benchmarks/publisher_rate_accuracy.py [--bootstrap B] [--warmup-s 5]
"""

import argparse
import collections
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from ground import contract as schema
from ground.kafka.topics import create_topics, delete_topics
from publisher.codec import decode
from publisher.config import PublisherConfig
from publisher.producer import publish
from stagebench.run.bootstrap import resolve

READ_TIMEOUT_S = 60.0
WARMUP_RATE = 5000


@dataclass(frozen=True)
class Case:
    settings: dict[str, Any]
    targets: tuple[tuple[int, float, float], ...]
    """(second, lowest, highest) records appended in that broker second."""


CASES = {
    "constant": Case(
        {"rate": 5000, "duration_s": 10},
        tuple((s, 5000 * 0.98, 5000 * 1.02) for s in range(1, 10)),
    ),
    "periodic-burst": Case(
        {
            "rate": 400,
            "workload": "periodic-burst",
            "burst_messages": 4000,
            "burst_every_s": 3,
            "burst_duration_s": 0.5,
            "duration_s": 7,
        },
        (
            (3, 4000, float("inf")),
            (6, 4000, float("inf")),
            *((s, 380, 420) for s in (1, 2, 4, 5)),
        ),
    ),
    "single-burst": Case(
        {
            "rate": 400,
            "workload": "single-burst",
            "backlog_s": 3,
            "backlog_rate": 4000,
            "duration_s": 6,
        },
        ((1, 3920, 4080), (2, 3920, 4080), (4, 380, 420), (5, 380, 420)),
    ),
}


def per_second(stamps: list[int], start_ms: int) -> list[int]:
    counts = collections.Counter((t - start_ms) // 1000 for t in stamps)
    return [counts.get(s, 0) for s in range(max(counts) + 1)]


def read_back(bootstrap: str, topics: list[str], want: int) -> list[tuple[int, bytes]]:
    """(broker timestamp, value) of every record of ``topics`` (one partition each)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(t, 0, 0) for t in topics])
    found: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        while len(found) < want and time.monotonic() < deadline:
            for m in consumer.consume(10_000, timeout=0.5):
                if m.error() is None:
                    found.append((m.timestamp()[1], m.value()))
    finally:
        consumer.close()
    return found


def fresh_topics(bootstrap: str) -> list[str]:
    topics = [f"bench-speed-{uuid.uuid4().hex[:8]}", f"bench-flow-{uuid.uuid4().hex[:8]}"]
    create_topics(bootstrap, topics)
    return topics


def warm_up(bootstrap: str, seconds: float) -> None:
    """Publish to throwaway topics, so the broker's hot paths are compiled before measuring."""
    topics = fresh_topics(bootstrap)
    try:
        config = PublisherConfig(
            rate=WARMUP_RATE, duration_s=seconds, speed_topic=topics[0], flow_topic=topics[1]
        )
        publish(bootstrap, config)
    finally:
        delete_topics(bootstrap, topics)


def measure(bootstrap: str, name: str, case: Case) -> dict[str, Any]:
    topics = fresh_topics(bootstrap)
    try:
        config = PublisherConfig(speed_topic=topics[0], flow_topic=topics[1], **case.settings)
        summary = publish(bootstrap, config)
        records = read_back(bootstrap, topics, summary.sent)
    finally:
        delete_topics(bootstrap, topics)
    broker = per_second([t for t, _ in records], summary.start_ms)
    scheduled = per_second([decode(v)[schema.SCHEDULED_TS] for _, v in records], summary.start_ms)
    misses, worst = [], 0.0
    for second, lo, hi in case.targets:
        got = broker[second] if second < len(broker) else 0
        worst = max(worst, lo - got, got - hi)
        if not lo <= got <= hi:
            misses.append(f"second {second}: {got} not in [{lo:g}, {hi:g}]")
    print(
        f"{name}: {summary.sent} sent, send lag {summary.send_lag_ms} ms\n"
        f"  broker per second    {broker}\n  scheduled per second {scheduled}\n"
        f"  {'target met' if not misses else 'target missed: ' + '; '.join(misses)}",
        flush=True,
    )
    return {
        "broker_per_second": broker,
        "scheduled_per_second": scheduled,
        "send_lag_ms": summary.send_lag_ms,
        "worst_deviation": max(worst, 0.0),
        "met": not misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka (default: the embedded broker)")
    parser.add_argument(
        "--warmup-s", type=float, default=5.0, help="warm-up publish, seconds (default 5; 0: none)"
    )
    args = parser.parse_args()
    bootstrap = resolve(args.bootstrap)
    if args.warmup_s > 0:
        warm_up(bootstrap, args.warmup_s)
    results = {name: measure(bootstrap, name, case) for name, case in CASES.items()}
    print(json.dumps({**results, "all_met": all(r["met"] for r in results.values())}))


if __name__ == "__main__":
    main()
