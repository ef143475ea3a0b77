"""Building typed, frozen configuration objects from user mappings.

Each concern (broker, publisher, pipeline, evaluator, run) has one frozen
dataclass that validates itself in ``__post_init__``. :func:`from_mapping`
builds one from a TOML section or CLI overrides and rejects unknown keys, so a
typo never silently falls back to a default.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from ground.errors import ConfigError

T = TypeVar("T")


def from_mapping(cls: type[T], values: Mapping[str, Any], section: str) -> T:
    """Build ``cls`` from ``values``; unknown keys and bad values raise ConfigError."""
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigError(
            f"unknown key(s) in [{section}]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(fields))})"
        )
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"[{section}]: {err}") from err


def require(condition: bool, message: str) -> None:
    """Raise ConfigError(message) unless condition holds; for ``__post_init__``."""
    if not condition:
        raise ConfigError(message)


def as_dict(config: Any) -> dict[str, Any]:
    """A config object as plain JSON-ready data, for storing with results."""
    return dataclasses.asdict(config)
