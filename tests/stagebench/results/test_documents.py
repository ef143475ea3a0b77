"""comparison.json, capacity.json and capacities.json read back: every version this
stagebench reads, and one error line for the rest."""

import json

import pytest

from ground import rundir
from ground.errors import EvaluationError
from stagebench.results.documents import read_capacities, read_capacity, read_comparison


@pytest.mark.parametrize(("read", "name"), [(read_comparison, rundir.COMPARISON),
                                            (read_capacity, rundir.CAPACITY),
                                            (read_capacities, rundir.CAPACITIES)])  # fmt: skip
def test_a_document_of_this_version_or_of_none_is_read_and_another_refused(tmp_path, read, name):
    path = tmp_path / name
    path.write_text(json.dumps({"stage": "join"}))  # written before documents had a version
    assert read(tmp_path) == {"stage": "join"}
    path.write_text(json.dumps({"schema_version": 1, "stage": "join"}))
    assert read(tmp_path)["stage"] == "join"
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
