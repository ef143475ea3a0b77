"""Evaluator speed and memory against the bare consume floor.

Writes N synthetic join-stage output records to a fresh LogAppendTime topic,
then, each in its own process (so peak memory is the job's own): consumes the
topic with confluent-kafka doing nothing else (the floor), and evaluates it
with ``evaluator.evaluate`` (all its files). Prints one JSON line per size, the
largest last::

    {"records": …, "evaluate_s": …, "consume_s": …, "ratio": …, "peak_rss_mb": …}

Target: evaluate_s ≤ 1.5 × consume_s, peak_rss_mb ≤ 2048 at 10 M.

    python benchmarks/evaluator_speed.py --sizes 1000000 10000000 [--bootstrap HOST:PORT]
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ground import contract as s

BASE_TS = 1_763_867_400_000


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    from confluent_kafka import Producer

    from ground.kafka.topics import create_topics

    create_topics(bootstrap, [topic], partitions=partitions)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    now = int(time.time() * 1000)
    for i in range(count):
        loc, lane, sec = i % 5000, i // 5000 % 3 + 1, i // 15000
        value = json.dumps(
            {
                s.RUN_ID: "bench",
                s.INPUT_TS_LATEST: now,
                s.INPUT_TS_EARLIEST: now - 3,
                s.INPUT_COUNT: 2,
                s.LOCATION_ID: f"RWS01_MONIBAS_{loc:010d}ra",
                s.LANE: lane,
                s.OBSERVATION_TS: BASE_TS + sec * 1000,
                s.SPEED: 87.3,
                s.FLOW: 12.0,
                s.SEQ: sec,
            },
            separators=(",", ":"),
        ).encode()
        while True:
            try:
                producer.produce(topic, value, key=str(loc).encode())
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush()


def child_consume(bootstrap: str, topic: str) -> dict:
    """The floor: every record fetched into Python, nothing else done."""
    from confluent_kafka import TopicPartition

    from evaluator.topics import consume

    started = time.monotonic()
    consumer = consume._consumer(bootstrap)
    ranges = consume.end_offsets(consumer, topic)
    consumer.assign([TopicPartition(topic, p, lo) for p, (lo, _) in ranges.items()])
    total, seen = sum(hi - lo for lo, hi in ranges.values()), 0
    while seen < total:
        seen += len(consumer.consume(num_messages=200_000, timeout=0.5))
    consumer.close()
    return {"seconds": time.monotonic() - started, "records": seen}


def child_evaluate(bootstrap: str, topic: str) -> dict:
    from evaluator.config import EvaluatorConfig
    from evaluator.evaluation import evaluate
    from evaluator.model.run_info import RunInfo

    run = RunInfo(id="bench", stage="join", output_topic=topic)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as out:
        summary = evaluate(bootstrap, run, EvaluatorConfig(warmup_s=0), Path(out))
    return {"seconds": time.monotonic() - started, "records": summary.records.outputs_total}


def in_child(kind: str, bootstrap: str, topic: str) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--bootstrap", bootstrap, "--topic", topic],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000],
                        help="record counts (default: 1000000 10000000)")  # fmt: skip
    parser.add_argument("--bootstrap", help="Kafka (default: stagebench.run.bootstrap.resolve)")
    parser.add_argument("--partitions", type=int, default=2, help="topic partitions (default: 2)")
    parser.add_argument("--child", choices=("consume", "evaluate"), help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = (child_consume if args.child == "consume" else child_evaluate)(
            args.bootstrap, args.topic
        )
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return 0
    from stagebench.run.bootstrap import resolve

    bootstrap = resolve(args.bootstrap)
    for size in sorted(args.sizes):
        topic = f"bench-eval-{size}-{uuid.uuid4().hex[:6]}"
        started = time.monotonic()
        produce(bootstrap, topic, size, args.partitions)
        print(f"produced {size:,} records in {time.monotonic() - started:.1f} s", file=sys.stderr)
        consume = in_child("consume", bootstrap, topic)
        evaluation = in_child("evaluate", bootstrap, topic)
        assert consume["records"] == evaluation["records"] == size
        ratio = evaluation["seconds"] / consume["seconds"]
        print(
            f"{size:,} records: consume {consume['seconds']:.2f} s, evaluate "
            f"{evaluation['seconds']:.2f} s (ratio {ratio:.2f}, target <= 1.5), peak RSS "
            f"{evaluation['peak_rss_mb']:.0f} MB (consume {consume['peak_rss_mb']:.0f} MB)",
            file=sys.stderr,
        )
        line = {
            "records": size,
            "evaluate_s": round(evaluation["seconds"], 3),
            "consume_s": round(consume["seconds"], 3),
            "ratio": round(ratio, 3),
            "peak_rss_mb": round(evaluation["peak_rss_mb"], 1),
        }
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
