"""Reading summary.json back: its schema version is checked, an unknown one refused."""

import json

import pytest

from evaluator.model.summary_file import SCHEMA_VERSION, load_summary
from ground import rundir
from ground.errors import EvaluationError
from tests.evaluator.summaries import summary_doc


def _write(tmp_path, doc):
    (tmp_path / rundir.SUMMARY).write_text(json.dumps(doc))
    return tmp_path / rundir.SUMMARY


@pytest.mark.parametrize(
    ("version", "found"),
    [(SCHEMA_VERSION + 1, f"schema_version {SCHEMA_VERSION + 1}"), ("1", "schema_version '1'"),
     (True, "schema_version True"), (None, "no schema_version")],
)  # fmt: skip
def test_another_version_is_refused_in_one_line_naming_the_file(tmp_path, version, found):
    doc = {k: v for k, v in summary_doc().items() if k != "schema_version"}
    path = _write(tmp_path, doc if version is None else {"schema_version": version, **doc})
    with pytest.raises(EvaluationError) as caught:
        load_summary(tmp_path)
    assert str(caught.value) == (
        f"{path} has {found}; this stagebench reads schema_version {SCHEMA_VERSION} only: "
        "read it with the stagebench that wrote it, or evaluate the run again"
    )


def test_a_missing_or_foreign_file_is_refused_naming_it(tmp_path):
    with pytest.raises(EvaluationError, match="not found: evaluate the run first"):
        load_summary(tmp_path)
    (tmp_path / rundir.SUMMARY).write_text("{")
    with pytest.raises(EvaluationError, match="is not valid JSON"):
        load_summary(tmp_path)
    _write(tmp_path, [SCHEMA_VERSION])
    with pytest.raises(EvaluationError, match="not a JSON object"):
        load_summary(tmp_path)


def test_a_summary_is_loaded_as_the_model_that_wrote_it(tmp_path):
    doc = summary_doc(records={"missing": 3}, trusted=False)
    _write(tmp_path, doc)
    summary = load_summary(tmp_path)
    assert summary.records.missing == 3 and summary.trusted is False
    assert summary.as_dict() == doc


def test_a_stored_summary_without_the_sections_added_since_loads(tmp_path):
    doc = summary_doc()
    del doc["input_lateness"], doc["updates"]
    _write(tmp_path, doc)
    summary = load_summary(tmp_path)
    assert summary.input_lateness is None and summary.updates is None


def test_a_summary_lacking_a_key_every_summary_has_is_refused_naming_it(tmp_path):
    doc = summary_doc()
    del doc["records"]["outputs"]
    path = _write(tmp_path, doc)
    with pytest.raises(EvaluationError, match=f"{path} is not a whole stagebench summary"):
        load_summary(tmp_path)
