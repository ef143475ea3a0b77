"""A Flink standalone session cluster on this machine: one job manager and one task
manager started in the foreground by the scripts the Flink distribution ships
(:func:`engines.flink.runtime.distribution`), each in a process group of its own, on
free loopback ports."""

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from engines.flink import runtime
from ground.kafka.ports import free_port

READY_S = 120


def rest(address: str, path: str) -> dict:
    with urllib.request.urlopen(f"http://{address}{path}", timeout=5) as response:
        return json.load(response)


@contextlib.contextmanager
def session_cluster(log_dir: Path, slots: int = 2) -> Iterator[str]:
    """The cluster's REST address HOST:PORT, once its task manager offers ``slots``."""
    home = runtime.distribution()
    port = free_port()
    conf = {
        "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1", "rest.port": port,
        "jobmanager.rpc.address": "127.0.0.1", "jobmanager.bind-host": "127.0.0.1",
        "jobmanager.rpc.port": free_port(), "taskmanager.host": "127.0.0.1",
        "taskmanager.bind-host": "127.0.0.1", "taskmanager.numberOfTaskSlots": slots,
        "jobmanager.memory.process.size": "1024m", "taskmanager.memory.process.size": "1280m",
    }  # fmt: skip
    args = [part for key, value in conf.items() for part in ("-D", f"{key}={value}")]
    env = {**os.environ, "FLINK_CONF_DIR": str(home / "conf"), "FLINK_LOG_DIR": str(log_dir)}
    processes = []
    try:
        for script in ("jobmanager.sh", "taskmanager.sh"):
            with open(log_dir / f"{script}.out", "wb") as out:
                processes.append(subprocess.Popen(
                    ["bash", str(home / "bin" / script), "start-foreground", *args], env=env,
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                ))  # fmt: skip
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + READY_S
        while True:
            for process in processes:
                log = log_dir / f"{Path(process.args[1]).name}.out"
                assert process.poll() is None, log.read_text()[-3000:]
            with contextlib.suppress(OSError, ValueError):
                if rest(address, "/overview")["slots-available"] >= slots:
                    break
            assert time.monotonic() < deadline, f"no session cluster within {READY_S} s"
            time.sleep(1)
        yield address
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
