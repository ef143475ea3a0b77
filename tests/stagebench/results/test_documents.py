"""comparison.json, capacity.json and capacities.json read back: every version this
stagebench reads, and one error line for the rest."""

import json
from pathlib import Path

import pytest

from ground import rundir
from ground.errors import EvaluationError
from stagebench.results.documents import read_capacities, read_capacity, read_comparison
from tests.stagebench.capacity.records import BASE


@pytest.mark.parametrize(
    ("read", "name", "doc"),
    [(read_comparison, rundir.COMPARISON, {"stage": "join"}),
     (lambda d: read_capacity(d).as_dict(), rundir.CAPACITY, BASE),
     (read_capacities, rundir.CAPACITIES, {"searches": []})],
)  # fmt: skip
def test_a_document_of_this_version_or_of_none_is_read_and_another_refused(
    tmp_path, read, name, doc
):
    path = tmp_path / name
    path.write_text(json.dumps(doc))  # written before documents had a version
    assert read(tmp_path) == doc
    path.write_text(json.dumps({"schema_version": 1, **doc}))
    assert read(tmp_path).items() >= doc.items()
    path.write_text(json.dumps({"schema_version": 2}))
    with pytest.raises(EvaluationError, match=f"{name} has schema_version 2; this stagebench"):
        read(tmp_path)
    path.write_text("[1, 2]")
    with pytest.raises(EvaluationError, match="not a stagebench document"):
        read(tmp_path)
    path.write_text("{")
    with pytest.raises(EvaluationError, match="is not valid JSON"):
        read(tmp_path)
    path.unlink()
    with pytest.raises(EvaluationError, match=f"{name} not found"):
        read(tmp_path)


def test_a_capacity_json_without_a_key_it_needs_is_one_error_line(tmp_path):
    (tmp_path / rundir.CAPACITY).write_text(json.dumps({"stage": "join"}))
    with pytest.raises(EvaluationError, match="is not a capacity search's result: no key "):
        read_capacity(tmp_path)


def test_every_stored_capacity_search_loads_and_writes_back_byte_identical():
    for path in sorted(Path("docs/reference-data").glob("*/capacity.json")):
        again = json.dumps(read_capacity(path.parent).as_dict(), indent=2, default=str) + "\n"
        assert again == path.read_text(), path
