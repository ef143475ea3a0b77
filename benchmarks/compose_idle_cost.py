"""Idle CPU of docker-compose.yml's brokers: what a benchmark's own broker costs when nothing
is sent to it, its healthchecks included.

Brings the compose file up (the single broker, or the three-node ``cluster`` profile),
waits until every node is healthy, lets it settle, then reads each container's cgroup CPU
counter over the measured seconds. The cgroup holds every process the container ran, the
healthcheck's too (Docker starts it inside the container), so this is the whole cost, and
other load on the machine does not enter it. Prints % of one core per node and in all,
then brings the project down with its volumes.

    python benchmarks/compose_idle_cost.py                     # one broker, 60 s
    python benchmarks/compose_idle_cost.py --cluster --seconds 120
    python benchmarks/compose_idle_cost.py --file old-compose.yml   # another version of the file

The image is ``STAGEBENCH_KAFKA_IMAGE`` (default the official one), as for compose itself.
"""

import argparse
import subprocess
import sys
import time
import uuid
from pathlib import Path

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"
CLUSTER = ("kafka-1", "kafka-2", "kafka-3")


def cpu_seconds(container_id: str) -> float:
    """CPU seconds the container's cgroup has used (cgroup v1 or v2)."""
    root = Path("/sys/fs/cgroup")
    for pattern, read in (
        (f"**/*{container_id}*/cpuacct.usage", lambda p: int(p.read_text()) / 1e9),
        (f"**/*{container_id}*/cpu.stat", lambda p: int(p.read_text().split()[1]) / 1e6),
    ):
        for path in root.glob(pattern):
            return read(path)
    raise SystemExit(f"no cgroup CPU counter for container {container_id[:12]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=COMPOSE, help="compose file (default: ours)")
    parser.add_argument("--cluster", action="store_true", help="the three-broker profile")
    parser.add_argument("--settle", type=float, default=30, help="seconds after healthy (30)")
    parser.add_argument("--seconds", type=float, default=60, help="measured seconds (60)")
    args = parser.parse_args()
    project = f"stagebench-idle-{uuid.uuid4().hex[:6]}"
    base = ["docker", "compose", "-f", str(args.file), "-p", project]
    services = list(CLUSTER) if args.cluster else []
    profile = ["--profile", "cluster"] if args.cluster else []
    try:
        started = time.monotonic()
        subprocess.run([*base, *profile, "up", "-d", "--wait", *services], check=True)
        print(f"healthy after {time.monotonic() - started:.1f} s", file=sys.stderr)
        ids = subprocess.run(
            [*base, *profile, "ps", "--quiet"], capture_output=True, text=True, check=True
        ).stdout.split()
        time.sleep(args.settle)
        before = {cid: cpu_seconds(cid) for cid in ids}
        t0 = time.monotonic()
        time.sleep(args.seconds)
        elapsed = time.monotonic() - t0
        used = {cid: cpu_seconds(cid) - before[cid] for cid in ids}
    finally:
        subprocess.run([*base, *profile, "down", "-v"], check=False, capture_output=True)
    for cid, seconds in used.items():
        print(f"container {cid[:12]}: {100 * seconds / elapsed:.2f} % of a core")
    total = 100 * sum(used.values()) / elapsed
    print(f"idle {'cluster' if args.cluster else 'single broker'} ({args.file.name}): "
          f"{total:.2f} % of a core over {elapsed:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
