"""How the result records are written down: each field's ``metadata["doc"]`` says what its
key holds (the schema pages are generated from it, :mod:`evaluator.files.result_schema`), and
:func:`as_dict` turns a record into the JSON object a file holds. Shared by a run's
summary (:mod:`evaluator.model.result`), a suite's comparison rows
(:mod:`evaluator.comparison.result`) and a capacity search's result. :func:`from_dict`
reads such an object back into its record."""

import types
import typing
from dataclasses import MISSING, fields, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")

Stats = dict[str, float | int | None]
"""count, mean, min, the percentile ladder and max
(:data:`evaluator.statistics.stats.STAT_KEYS`)."""
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


def from_dict(cls: type[R], doc: dict[str, Any]) -> R:
    """The record ``cls`` of a JSON object :func:`as_dict` wrote: nested records read
    back, a ``flatten`` record from its parent's keys (None when its first key is
    absent). A key an older file lacks takes the field's default, else None where the
    field may be None; KeyError names a key the record cannot do without."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):
        record = record_type(hints[f.name])
        if f.metadata.get("flatten") and record is not None:
            first = fields(record)[0].name
            values[f.name] = from_dict(record, doc) if first in doc else None
        elif f.name in doc:
            value = doc[f.name]
            if record is not None and value is not None:
                value = from_dict(record, value)
            values[f.name] = value
        elif f.default is not MISSING:
            values[f.name] = f.default
        elif _optional(hints[f.name]):
            values[f.name] = None
        else:
            raise KeyError(f.name)
    return cls(**values)


def record_type(hint: Any) -> "type[DataclassInstance] | None":
    """The record class of a field's type (``X`` or ``X | None``), None for other types
    (a list of records too: its reader reads the items)."""
    if typing.get_origin(hint) is list:
        return None
    for arg in (hint, *typing.get_args(hint)):
        if isinstance(arg, type) and is_dataclass(arg):
            return arg
    return None


def _optional(hint: Any) -> bool:
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    return union and type(None) in typing.get_args(hint)
