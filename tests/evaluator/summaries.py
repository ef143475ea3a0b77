"""Whole :class:`~evaluator.model.result.Summary` records made in a test from the sections it
cares about: the rest is summary_golden.json's run that read no input, without its
steadiness and intervals, with no versions, with the sections added since (null)."""

import json
from pathlib import Path
from typing import Any

from evaluator.model.record import from_dict
from evaluator.model.result import Summary

GOLDEN = Path(__file__).with_name("summary_golden.json")
RECORDS = ("period", "records", "throughput", "evaluation")
"""The sections that are records: a test's keys replace the base's one by one."""


def summary_doc(**sections: Any) -> dict[str, Any]:
    """summary.json's document with ``sections`` in place of the base's."""
    doc = json.loads(GOLDEN.read_text())["no_inputs_read"]
    doc.update(versions={}, steady_state=None, confidence=None, input_lateness=None, updates=None)
    for name, value in sections.items():
        doc[name] = {**doc[name], **value} if name in RECORDS else value
    return doc


def made_summary(**sections: Any) -> Summary:
    """The :class:`Summary` of :func:`summary_doc`."""
    return from_dict(Summary, summary_doc(**sections))
