"""A shared application's listener routes each query's events to its own run
(engines.spark.progress.ProgressWriter), without Spark: the events as the listener gets them."""

import json

from engines.spark.progress import ProgressWriter


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_querys_events_go_to_the_run_that_registered_its_name(tmp_path):
    writer = ProgressWriter()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    writer.route("stagebench-ingest-builtin-1", first)
    writer.route("stagebench-join-builtin-2", second)
    writer._write("started", {"id": "q1", "name": "stagebench-ingest-builtin-1"})
    writer._write("started", {"id": "q2", "name": "stagebench-join-builtin-2"})
    writer._write("progress", {"id": "q2", "name": "stagebench-join-builtin-2", "batchId": 0})
    writer._write("idle", {"id": "q1"})  # idle and terminated events carry only the id
    writer._write("terminated", {"id": "q2"})
    writer._write("started", {"id": "q3", "name": "a warm-up nobody routed"})
    writer._write("idle", {"id": "q3"})
    assert [e["event"] for e in _lines(first)] == ["started", "idle"]
    assert [e["event"] for e in _lines(second)] == ["started", "progress", "terminated"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]


def test_a_job_of_its_own_writes_every_event_to_its_one_file(tmp_path):
    path = tmp_path / "engine_progress.jsonl"
    writer = ProgressWriter(path)
    writer._write("started", {"id": "q1", "name": "any"})
    writer._write("idle", {"id": "q1"})
    assert [e["event"] for e in _lines(path)] == ["started", "idle"]
