"""Highest sustained rate of the publisher, next to Kafka's own producer benchmark.

Both run against the same broker in the same process run, with the same
record size, acks and linger.ms: the publisher with a target rate far above
what it can reach (so it sends flat out and its achieved rate is its
capacity), Kafka's ``org.apache.kafka.tools.ProducerPerformance`` with
``--throughput -1``. Rates count delivered records over the time until the
last one was delivered. The last line printed is one JSON object:
``{"publisher_mps": …, "kafka_tool_mps": …, "ratio": …}``.

    python benchmarks/publisher_max_rate.py [--bootstrap B] [--seconds 10]
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import threading
import time

from ground.jvm import maven
from ground.jvm.java import java_executable
from ground.kafka import KAFKA_VERSION
from ground.kafka.node import BROKER_JARS
from ground.kafka.topics import create_topics, delete_topics
from publisher.codec import LaneEncoder
from publisher.config import PublisherConfig
from publisher.model import make_locations
from publisher.producer import publish
from stagebench.run.bootstrap import resolve

TOOL = "org.apache.kafka.tools.ProducerPerformance"
KAFKA_TOOLS = maven.Pin.parse(
    f"org.apache.kafka:kafka-tools:{KAFKA_VERSION} 2fed3bcaa4420a6710a195ae8366893b3a8703a1"
)
"""The tool's jar; the libraries it needs are the broker's (not kafka-tools' own runtime
closure, which brings Kafka Connect's)."""
# Far above the capacity of either producer on a small machine; a high time
# scale keeps the location pool small (rate = 2 × lanes × minutes per second).
FLAT_OUT_RATE = 4_000_000.0
FLAT_OUT_TIME_SCALE = 200.0


def record_size() -> int:
    """Median value size of the publisher's messages."""
    sizes = []
    for loc in make_locations(200, seed=1):
        enc = LaneEncoder(loc.location_id, 1, loc.latitude, loc.longitude, loc.num_lanes)
        now = int(time.time() * 1000)
        sizes += [len(enc.speed(now, now, 12_345, 100.0, 97.3)), len(enc.flow(now, now, 1, 1, 21))]
    return int(statistics.median(sizes))


def publisher_rate(bootstrap: str, seconds: float, acks: str, linger_ms: float) -> float:
    topics = [f"bench-speed-{time.time_ns()}", f"bench-flow-{time.time_ns()}"]
    create_topics(bootstrap, topics)
    config = PublisherConfig(
        rate=FLAT_OUT_RATE,
        time_scale=FLAT_OUT_TIME_SCALE,
        duration_s=2 * seconds,
        acks=acks,  # type: ignore[arg-type]
        linger_ms=linger_ms,
        speed_topic=topics[0],
        flow_topic=topics[1],
        behind_warn_ms=1e12,  # flat out it is behind by design
    )
    # the schedule asks for far more than can be sent: stop it after ``seconds``
    stop = threading.Event()
    timer = threading.Timer(seconds, stop.set)
    timer.start()
    try:
        summary = publish(bootstrap, config, stop=stop)
    finally:
        timer.cancel()
        delete_topics(bootstrap, topics)
    elapsed_s = (summary.end_ms - summary.start_ms) / 1000
    print(
        f"publisher: {summary.delivered} records delivered in {elapsed_s:.2f} s "
        f"({summary.delivery_errors} errors)",
        flush=True,
    )
    return summary.delivered / elapsed_s


def kafka_tool_rate(bootstrap: str, records: int, size: int, acks: str, linger_ms: float) -> float:
    jars = [
        *maven.resolve(BROKER_JARS, "the Kafka broker's jars"),  # the broker's own cache
        *maven.resolve([KAFKA_TOOLS], "Kafka's producer benchmark"),
    ]
    topic = f"bench-tool-{time.time_ns()}"
    create_topics(bootstrap, [topic])
    cmd = [
        java_executable(),
        "-cp",
        maven.classpath(jars),
        TOOL,
        "--topic", topic,
        "--num-records", str(records),
        "--record-size", str(size),
        "--throughput", "-1",
        "--producer-props",
        f"bootstrap.servers={bootstrap}", f"acks={acks}", f"linger.ms={linger_ms:g}",
    ]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    finally:
        delete_topics(bootstrap, [topic])
    final = [line for line in proc.stdout.splitlines() if f"{records} records sent" in line]
    if proc.returncode != 0 or not final:
        sys.exit(f"{TOOL} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    print(f"kafka tool: {final[-1]}", flush=True)
    return float(re.search(r"([\d.]+) records/sec", final[-1]).group(1))  # type: ignore[union-attr]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="Kafka (default: the embedded broker)")
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="publisher run length (default 10)"
    )
    parser.add_argument("--acks", default="1", help="acks for both producers (default 1)")
    parser.add_argument(
        "--linger-ms", type=float, default=5.0, help="linger.ms for both (default 5)"
    )
    args = parser.parse_args()
    bootstrap = resolve(args.bootstrap)
    size = record_size()
    print(f"record size {size} bytes, acks={args.acks}, linger.ms={args.linger_ms:g}", flush=True)
    publisher_mps = publisher_rate(bootstrap, args.seconds, args.acks, args.linger_ms)
    print(f"publisher: {publisher_mps:,.0f} msg/s", flush=True)
    # as many records as the publisher managed, so both run for a similar time
    records = max(100_000, int(publisher_mps * args.seconds))
    tool_mps = kafka_tool_rate(bootstrap, records, size, args.acks, args.linger_ms)
    print(f"kafka tool: {tool_mps:,.0f} msg/s", flush=True)
    ratio = publisher_mps / tool_mps
    print(f"publisher / kafka tool = {ratio:.2f} (target >= 0.80)", flush=True)
    print(
        json.dumps(
            {
                "publisher_mps": round(publisher_mps, 1),
                "kafka_tool_mps": round(tool_mps, 1),
                "ratio": round(ratio, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
