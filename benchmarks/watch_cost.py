"""CPU cost of what the runner does beside the job: the live output watcher and the sampler.

A child process writes job-shaped outputs to a fresh LogAppendTime topic at
``--rate`` (400/s, the default run's output rate at ingest); this process runs
what a run's warm-up runs: an :class:`~stagebench.run.watch.OutputWatcher` on that
topic, asked ``settled()`` every 2 s as the runner does, and the resource
sampler at 1 sample/s. The cost is this process's whole CPU time (every thread,
librdkafka's included) over ``--seconds``, as a share of one core. Prints one
JSON line::

    {"seconds": …, "rate": …, "outputs_written": …, "outputs_watched": …, "cpu_pct_of_core": …,
     "sampler_cpu_pct_of_core": …, "idle_cpu_pct_of_core": …}

``idle_cpu_pct_of_core`` is the same process measured for as long with nothing
running (the interpreter alone), so the figure is not flattered by leaving it out.

Target: < 2 % of one core at 400 msg/s.

    python benchmarks/watch_cost.py [--seconds 60] [--rate 400] [--bootstrap HOST:PORT]
"""

import argparse
import json
import os
import subprocess
import sys
import time
import uuid

import psutil

from ground.kafka.topics import create_topics, delete_topics
from stagebench.resources.sampler import Group, ResourceSampler
from stagebench.run.bootstrap import resolve
from stagebench.run.runner import SETTLE_EVERY_S
from stagebench.run.watch import OutputWatcher

TARGET_PCT = 2.0
SETTLE_WINDOW_S = 30.0

# An output like the ingest stage's, carrying an input timestamp 100 ms old.
WRITER = """
import json, sys, time
from confluent_kafka import Producer
bootstrap, topic, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
start = time.monotonic()
sent = 0
while (elapsed := time.monotonic() - start) < seconds:
    due = int(elapsed * rate)
    while sent < due:
        now = int(time.time() * 1000)
        value = {"measurement_id": f"PZH01_MST_{sent % 500:04d}_00", "lane": sent % 4,
                 "observed_at": now // 1000 * 1000, "speed": 87.5,
                 "input_ts_latest": now - 100, "input_ts_earliest": now - 100}
        producer.produce(topic, json.dumps(value).encode())
        sent += 1
    producer.poll(0)
    time.sleep(0.005)
producer.flush(10)
print(sent)
"""


def cpu_s() -> float:
    times = psutil.Process().cpu_times()
    return times.user + times.system


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60,
                        help="how long to watch (default: 60)")  # fmt: skip
    parser.add_argument("--rate", type=float, default=400,
                        help="outputs per second (default: 400)")  # fmt: skip
    parser.add_argument("--bootstrap", help="Kafka (default: stagebench.run.bootstrap.resolve)")
    args = parser.parse_args()
    bootstrap = resolve(args.bootstrap)
    topic = f"bench-watch-{uuid.uuid4().hex[:6]}"
    create_topics(bootstrap, [topic], partitions=2)
    before = cpu_s()
    time.sleep(args.seconds)
    idle = cpu_s() - before
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, bootstrap, topic, str(args.rate), str(args.seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        sampler = ResourceSampler({"bench": Group(lambda: [os.getpid()], recursive=False)})
        watcher = OutputWatcher(bootstrap, topic).start()
        sampler.start()
        began, before = time.monotonic(), cpu_s()
        while time.monotonic() - began < args.seconds:
            time.sleep(SETTLE_EVERY_S)
            watcher.settled(SETTLE_WINDOW_S)
        used, elapsed = cpu_s() - before, time.monotonic() - began
        sampler.stop()
        written = int(writer.communicate(timeout=30)[0])
        time.sleep(2)  # the last outputs reach the watcher
        watcher.stop()
    finally:
        writer.kill()
        writer.wait()
        delete_topics(bootstrap, [topic])
    pct, sampler_pct = 100 * used / elapsed, 100 * sampler.cpu_s / elapsed
    print(
        f"watched {watcher.outputs:,} of {written:,} outputs in {elapsed:.1f} s "
        f"({args.rate:g}/s) with the sampler: {pct:.2f} % of one core (sampler thread "
        f"{sampler_pct:.2f} %, idle process {100 * idle / args.seconds:.2f} %; "
        f"target < {TARGET_PCT:g} %)",
        file=sys.stderr,
    )
    line = {
        "seconds": round(elapsed, 1),
        "rate": args.rate,
        "outputs_written": written,
        "outputs_watched": watcher.outputs,
        "cpu_pct_of_core": round(pct, 3),
        "sampler_cpu_pct_of_core": round(sampler_pct, 3),
        "idle_cpu_pct_of_core": round(100 * idle / args.seconds, 3),
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
