"""Building typed, frozen configuration objects from user mappings.

Each concern (broker, publisher, pipeline, evaluator, run) has one frozen
dataclass that validates itself in ``__post_init__``. :func:`from_mapping`
builds one from a TOML section or CLI overrides and rejects unknown keys, so a
typo never silently falls back to a default.
"""

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from ground.errors import ConfigError

T = TypeVar("T")


def from_mapping(cls: type[T], values: Mapping[str, Any], section: str) -> T:
    """Build ``cls`` from ``values``; unknown keys and bad values raise ConfigError."""
    check_types(cls, values, section)
    try:
        return cls(**values)
    except ConfigError as err:
        if str(err).startswith("["):  # a table inside this one named itself
            raise
        raise ConfigError(f"[{section}] {err}") from err
    except (TypeError, ValueError) as err:
        raise ConfigError(f"[{section}] {err}") from err


def check_types(cls: type, values: Mapping[str, Any], section: str) -> None:
    """ConfigError for a key of ``values`` that ``cls`` lacks or a value not of its key's
    type: what :func:`from_mapping` checks before it builds ``cls``, for a table that is
    only part of what builds it."""
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigError(
            f"unknown key(s) in [{section}]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(fields))})"
        )
    hints = typing.get_type_hints(cls)
    for name, value in values.items():
        expected = hints.get(name, Any)
        if not fits(value, expected):
            raise ConfigError(f"[{section}] {name}: expected {_kind(expected)}, got {value!r}")


def fits(value: Any, expected: Any) -> bool:
    """``value`` has the type ``expected`` names, as TOML and JSON give it: an integer is
    also a number, a mapping also a settings class; a type this does not know fits."""
    origin, args = typing.get_origin(expected), typing.get_args(expected)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, arg) for arg in args)
    if origin is Literal:
        return value in args
    if expected is type(None):
        return value is None
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected is str:
        return isinstance(value, str)
    if expected is Path:
        return isinstance(value, str | Path)
    if origin in (tuple, list):
        item = args[0] if args else Any
        return isinstance(value, tuple | list) and all(fits(v, item) for v in value)
    if origin is dict or expected is dict:
        return isinstance(value, Mapping)
    if dataclasses.is_dataclass(expected) and isinstance(expected, type):
        return isinstance(value, expected | Mapping)
    return True


def _kind(expected: Any) -> str:
    """``expected`` in words, for an error: "a number", "one of 'a', 'b'"."""
    origin, args = typing.get_origin(expected), typing.get_args(expected)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_kind(arg) for arg in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (tuple, list):
        return f"a list of {_kind(args[0]) if args else 'values'}"
    words = {bool: "true or false", int: "a whole number", float: "a number",
             str: "a string", Path: "a path", type(None): "unset", dict: "a table"}  # fmt: skip
    return words.get(expected, "a table" if origin is dict else getattr(expected, "__name__", "?"))


def require(condition: bool, message: str) -> None:
    """Raise ConfigError(message) unless condition holds; for ``__post_init__``."""
    if not condition:
        raise ConfigError(message)


def as_dict(config: Any) -> dict[str, Any]:
    """A config object as plain JSON-ready data, for storing with results."""
    return dataclasses.asdict(config)
