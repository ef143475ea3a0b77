"""CPU cost of the resource sampler itself, with the three kinds of groups a run has.

Starts what a run samples: an ``engine`` tree (a Python process with a few
children, recursive), a ``broker`` (a sleeping JVM when Java is found, so
the heap is read from hsperfdata as for Kafka; else a Python process; not
recursive, as the Kafka JVM starts no children, unless ``--broker-recursive``)
and ``bench`` (this process alone, not recursive), and samples them with the
machine rows for ``--seconds`` at ``--interval``. Prints one JSON line::

    {"seconds": …, "interval_s": …, "recursive_groups": …, "rounds": …, "processes": …,
     "machine_processes": …, "sampler_cpu_pct_of_core": …, "cpu_ms_per_round": …}

The cost is the sampler thread's own CPU time (``time.thread_time()`` read
in its loop, exposed as ``ResourceSampler.cpu_s``): exactly the work of
sampling, measured in the process that does it in a run, without the idle
interpreter a separate process would add. The wall-clock waits cost nothing.
Its largest part is finding each recursive group's children: psutil reads
the stat file of every process of the machine (``machine_processes``) once
per recursive group and round, about 15 µs per process on a 2-core VM.

Target: < 1 % of one core at 1 sample/s.

    python benchmarks/sampling_cost.py [--seconds 60] [--interval 1.0] [--children 3]
                                       [--broker-recursive]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from ground.jvm.heap import jvm_counters
from stagebench.resources.sampler import MACHINE, Group, ResourceSampler

TARGET_PCT = 1.0
SLEEP_JAVA = (
    "public class Sleep { public static void main(String[] a) throws Exception {"
    " Thread.sleep(3600_000); } }"
)


def start_engine(children: int) -> subprocess.Popen:
    """A Python process with ``children`` sleeping children, like a Spark driver's tree."""
    code = (
        "import subprocess, sys, time\n"
        f"kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])"
        f" for _ in range({children})]\n"
        "time.sleep(3600)\n"
    )
    return subprocess.Popen([sys.executable, "-c", code])


def start_broker(workdir: Path) -> tuple[subprocess.Popen, str]:
    """A sleeping JVM if Java is found (heap readable), else a sleeping Python process."""
    try:
        from ground.jvm.java import java_executable

        java = java_executable()
    except Exception as err:  # no Java: the broker group is then a plain process
        print(f"no Java ({err}): the broker is a Python process", file=sys.stderr)
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"]), "python"
    source = workdir / "Sleep.java"
    source.write_text(SLEEP_JAVA)
    jvm = subprocess.Popen([java, str(source)])
    deadline = time.monotonic() + 30
    while jvm_counters(jvm.pid) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return jvm, "jvm"


def stop(proc: subprocess.Popen) -> None:
    """Kill a process we started and every child it started."""
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    proc.kill()
    proc.wait()
    for child in family:
        try:
            child.kill()
            child.wait(5)
        except psutil.NoSuchProcess:
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60,
                        help="how long to sample (default: 60)")  # fmt: skip
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds between samples (default: 1.0)")  # fmt: skip
    parser.add_argument("--children", type=int, default=3,
                        help="children of the engine process (default: 3)")  # fmt: skip
    parser.add_argument("--broker-recursive", action="store_true",
                        help="sample the broker's children too (default: no)")  # fmt: skip
    args = parser.parse_args()
    started: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as workdir:
        try:
            engine = start_engine(args.children)
            started.append(engine)
            broker, broker_kind = start_broker(Path(workdir))
            started.append(broker)
            time.sleep(1)  # the engine's children are up
            sampler = ResourceSampler(
                {
                    "engine": Group(lambda: [engine.pid]),
                    "broker": Group(lambda: [broker.pid], recursive=args.broker_recursive),
                    "bench": Group(lambda: [os.getpid()], recursive=False),
                },
                interval_s=args.interval,
            )
            began = time.monotonic()
            sampler.start()
            time.sleep(args.seconds)
            samples = sampler.stop()
            elapsed = time.monotonic() - began
            processes = 1 + len(psutil.Process(engine.pid).children(recursive=True)) + 2
            machine_processes = len(psutil.pids())
        finally:
            for proc in started:
                stop(proc)
    rounds = 1 + len({s["time_ms"] for s in samples if s["process"] == MACHINE})
    heap = [s["heap_used_mb"] for s in samples if s["process"] == "broker" and s["heap_used_mb"]]
    pct = 100 * sampler.cpu_s / elapsed
    print(
        f"{rounds} rounds in {elapsed:.1f} s over {processes} processes in 3 groups (broker: "
        f"{broker_kind}{', heap read' if heap else ''}; {machine_processes} processes on the "
        f"machine): sampler thread {1000 * sampler.cpu_s / rounds:.2f} ms CPU per round, "
        f"{pct:.3f} % of one core (target < {TARGET_PCT:g} % at 1 sample/s)",
        file=sys.stderr,
    )
    line = {
        "seconds": round(elapsed, 1),
        "interval_s": args.interval,
        "recursive_groups": 1 + args.broker_recursive,
        "rounds": rounds,
        "processes": processes,
        "machine_processes": machine_processes,
        "sampler_cpu_pct_of_core": round(pct, 3),
        "cpu_ms_per_round": round(1000 * sampler.cpu_s / rounds, 3),
    }
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
