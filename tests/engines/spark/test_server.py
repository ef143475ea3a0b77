"""How the shared application watches and stops its queries.

The session and the queries are stand-ins with the attributes the server reads; the
application itself runs against real Spark and Kafka in tests/stagebench/run/test_runs.py.
"""

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from engines.spark.server import POLL_S, WATCH_S, Server, _Query
from ground import rundir


class _Session:
    def __init__(self) -> None:
        self.streams = SimpleNamespace(addListener=lambda listener: None)
        self.sparkContext = SimpleNamespace(applicationId="app-1")


class _StreamingQuery:
    def __init__(self) -> None:
        self.isActive = True
        self.lastProgress: Any = None
        self.status = {"message": "Initializing sources"}
        self.error: Exception | None = None
        self.stopped = False

    def exception(self) -> Exception | None:
        return self.error

    def stop(self) -> None:
        self.isActive, self.stopped = False, True


def _server_with_query(tmp_path: Path) -> tuple[Server, _StreamingQuery]:
    server = Server(_Session(), {})
    query = _StreamingQuery()
    config: Any = SimpleNamespace(trigger="processing-time")
    server.queries[tmp_path] = _Query(tmp_path, config, query)
    return server, query


def test_without_queries_it_polls_every_watch_interval() -> None:
    server = Server(_Session(), {})
    server.poll(100.0)
    assert not server.poll_due(100.0 + POLL_S)
    assert not server.poll_due(100.0 + WATCH_S - 0.01)
    assert server.poll_due(100.0 + WATCH_S)


def test_a_query_not_ready_is_polled_at_every_turn_until_ready(tmp_path: Path) -> None:
    server, query = _server_with_query(tmp_path)
    server.poll(100.0)
    assert server.poll_due(100.0 + POLL_S)
    assert not (tmp_path / rundir.READY).exists()

    query.status = {"message": "Waiting for data to arrive"}
    server.poll(100.0 + POLL_S)
    assert (tmp_path / rundir.READY).read_text() == "app-1\n"
    assert not server.poll_due(100.0 + 2 * POLL_S)
    assert server.poll_due(100.0 + POLL_S + WATCH_S)


def test_a_ready_query_that_stops_by_itself_is_reported_at_the_next_poll(tmp_path: Path) -> None:
    server, query = _server_with_query(tmp_path)
    query.lastProgress = {"batchId": 0}
    server.poll(100.0)
    query.isActive = False
    assert not server.poll_due(100.0 + POLL_S)
    assert server.poll_due(100.0 + WATCH_S)
    server.poll(100.0 + WATCH_S)
    assert (tmp_path / rundir.FAILED).read_text() == "the query stopped by itself\n"
    assert server.queries == {}


def test_a_stop_reports_a_query_that_failed_since_the_last_poll(tmp_path: Path) -> None:
    server, query = _server_with_query(tmp_path)
    query.lastProgress = {"batchId": 0}
    server.poll(100.0)
    query.isActive = False
    query.error = RuntimeError("the broker went away")
    server.handle({"stop": str(tmp_path)})
    assert (tmp_path / rundir.FAILED).read_text() == "the broker went away\n"
    assert (tmp_path / rundir.STOPPED).exists()
    assert server.queries == {}


def test_a_stop_of_a_running_query_stops_it_and_reports_no_failure(tmp_path: Path) -> None:
    server, query = _server_with_query(tmp_path)
    server.handle({"stop": str(tmp_path)})
    assert query.stopped
    assert not (tmp_path / rundir.FAILED).exists()
    assert (tmp_path / rundir.STOPPED).exists()
