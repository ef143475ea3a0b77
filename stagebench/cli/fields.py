"""Command-line options made from the fields of the configuration dataclasses.

The option takes its dest, type and stated default from the field and the rest from the
field's ``metadata``: ``help`` (the sentence, without the default), ``default`` (the
default in words, where the field's own is None or computed) and ``choices``. A new
field of a configuration class thus needs one edit to appear in ``--help``. The options
have no argparse default unless asked for one: a value left out keeps the config file's
or the dataclass's.
"""

import argparse
import dataclasses
import types
import typing
from typing import Any, Literal

from stagebench.config.layers import option_name


def default_text(cls: type, name: str) -> str:
    """The field's default as ``--help`` states it."""
    field = _field(cls, name)
    if "default" in field.metadata:
        return str(field.metadata["default"])
    value = field.default
    if value is None or value == ():
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def add_field(
    parser: argparse._ActionsContainer,
    cls: type,
    name: str,
    option: str | None = None,
    *,
    kind: Any = None,
    shown: str | None = None,
    keep_default: bool = False,
) -> None:
    """Add the option of ``cls``'s field ``name``; ``kind`` parses what the field's type
    cannot say, ``shown`` replaces the stated default, ``keep_default`` makes the field's
    default the option's."""
    field = _field(cls, name)
    choices = None
    if kind is None:
        kind, choices = _kind(typing.get_type_hints(cls)[name])
    choices = field.metadata.get("choices", choices)
    flag = field.metadata.get("option")
    option = option or (flag if isinstance(flag, str) else option_name(name))
    stated = shown or default_text(cls, name)
    parser.add_argument(
        option,
        dest=name,
        type=kind,
        choices=choices,
        metavar=None
        if choices
        else field.metadata.get("metavar", option.lstrip("-").upper().replace("-", "_")),
        default=field.default if keep_default else None,
        help=f"{field.metadata['help']} (default: {stated})".replace("%", "%%"),
    )


def _field(cls: type, name: str) -> dataclasses.Field:
    return {f.name: f for f in dataclasses.fields(cls)}[name]


def _kind(hint: Any) -> tuple[Any, tuple[Any, ...] | None]:
    """The argparse type and choices of a field's type hint."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint, *others = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if others:
            raise TypeError(f"a union of several types needs kind=: {hint} | {others}")
    if typing.get_origin(hint) is Literal:
        return str, typing.get_args(hint)
    if typing.get_origin(hint) is tuple and typing.get_args(hint) == (float, ...):
        return _numbers, None
    if hint in (int, float, str):
        return hint, None
    raise TypeError(f"no option type for {hint!r}: give kind=")


def _numbers(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(n) for n in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from err
