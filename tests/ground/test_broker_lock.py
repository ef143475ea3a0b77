"""The embedded broker's state is read under its home's lock: no Kafka here, the lock is
held by the test as a start in another process holds it."""

import concurrent.futures
import fcntl
import time

from ground.kafka import broker_state
from ground.kafka.broker import EmbeddedBroker
from ground.kafka.broker_state import BrokerState, NodeState


def test_status_waits_for_a_start_in_progress_and_reads_what_it_wrote(tmp_path, capsys):
    broker = EmbeddedBroker(home=tmp_path)
    node_home = tmp_path / "node-1"
    node = NodeState(1, 0, "127.0.0.1:9092", 9093, str(node_home / "logs"), str(node_home / "data"))
    state = BrokerState("127.0.0.1:9092", "4.3.1", str(tmp_path), time.time(), (node,), "1G")
    with open(tmp_path / "broker.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        broker.state_file.write_text("{")  # half written: read now, it would be cleaned
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            status = pool.submit(broker.status)
            time.sleep(0.5)
            assert not status.done()
            broker_state.write(broker.state_file, state)
            fcntl.flock(lock, fcntl.LOCK_UN)
            assert status.result(timeout=10) == state
    assert broker.state_file.exists()
    assert capsys.readouterr().err == (
        "Waiting for another stagebench command that is starting or stopping the embedded "
        f"broker in {tmp_path}...\n"
    )
