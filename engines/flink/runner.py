"""The Flink side of a job: runs the statements a job wrote, in the Flink runtime's Python.

Started by :mod:`engines.flink.job` with the interpreter of the Flink runtime
(:mod:`engines.flink.runtime`) as ``python runner.py STATEMENTS_JSON STATUS_FILE``, so
it imports only the standard library and PyFlink, never stagebench. It sets the table
configuration, runs the DDL, submits the INSERT (a local mini-cluster in a JVM child
of this process, or the session cluster the configuration names) and writes the job's
id and status to ``STATUS_FILE`` as one JSON object each time it changes. It stops,
cancelling the Flink job, on SIGTERM, SIGINT or SIGHUP and when its standard input
closes (the job that started it is gone); it exits 1 when the Flink job ends by
itself.
"""

import json
import os
import signal
import sys
import threading
import time

POLL_S = 0.2


def _watch_parent(stop: threading.Event) -> None:
    while os.read(sys.stdin.fileno(), 4096):
        pass
    stop.set()


def _status(path: str, **fields: object) -> None:
    part = path + ".part"
    with open(part, "w") as out:
        json.dump({"time_ms": int(time.time() * 1000), **fields}, out)
    os.replace(part, path)


def main(statements_file: str, status_file: str) -> int:
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=_watch_parent, args=(stop,), daemon=True).start()
    with open(statements_file) as f:
        plan = json.load(f)
    os.unlink(statements_file)  # it may hold a secret: gone once read, however the job ends

    # PyFlink serves Python functions from a gRPC server on every interface ("[::]") in a
    # local mini-cluster; no Python function runs on the statements' data path, so none
    os.environ["_python_worker_execution_mode"] = "process"  # noqa: SIM112 - PyFlink's name
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    for key, value in plan["settings"].items():
        conf.set(key, value)
    for statement in plan["ddl"]:
        env.execute_sql(statement)
    client = env.execute_sql(plan["insert"]).get_job_client()
    if client is None:
        print("ERROR: the INSERT started no Flink job", file=sys.stderr)
        return 1
    job_id = str(client.get_job_id())
    last = None
    while not stop.wait(POLL_S):
        status = client.get_job_status().result().name
        if status != last:
            _status(status_file, job_id=job_id, status=status)
            last = status
        if status in ("FAILED", "CANCELED", "FINISHED"):
            print(f"ERROR: the Flink job {job_id} ended by itself: {status}", file=sys.stderr)
            return 1
    client.cancel().result()
    _status(status_file, job_id=job_id, status="CANCELED")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
