"""How the result records are written down: each field's ``metadata["doc"]`` says what its
key holds (the schema pages are generated from it, :mod:`evaluator.result_schema`), and
:func:`as_dict` turns a record into the JSON object a file holds. Shared by a run's
summary (:mod:`evaluator.result`), a suite's comparison rows
(:mod:`evaluator.comparison_result`) and a capacity search's result."""

from dataclasses import fields, is_dataclass
from typing import Any

Stats = dict[str, float | int | None]
"""count, mean, min, the percentile ladder and max (:data:`evaluator.stats.STAT_KEYS`)."""
Section = dict[str, Any]
"""A section kept as its producer wrote it (its keys are listed in its doc)."""


def key_doc(text: str, **more: Any) -> dict[str, Any]:
    """A field's metadata: its documentation (and ``omit_none``/``flatten``/``keys``)."""
    return {"doc": text, **more}


def as_dict(record: Any) -> dict[str, Any]:
    """A record's keys and values in field order, nested records as dicts; values are
    not copied."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if value is None and (f.metadata.get("omit_none") or f.metadata.get("flatten")):
            continue
        if is_dataclass(value):
            value = as_dict(value)
            if f.metadata.get("flatten"):
                out.update(value)
                continue
        out[f.name] = value
    return out
