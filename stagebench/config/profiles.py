"""An engine's profiles: its settings that trade latency for throughput, each with its
candidate values from the latency end to the throughput end (``metadata["tune"]`` of the
engine's settings class: Flink's buffer timeout, Kafka Streams' cache, Spark's trigger
interval). The **latency** profile is every such setting at its first candidate (the
defaults), the **throughput** profile at its last. ``[run] profile`` runs an engine at
one (:func:`apply`); ``capacity --tune`` searches among the candidates
(:mod:`stagebench.capacity.tune`)."""

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

TUNE: Final = "tune"
"""The metadata key of a setting's candidate values, latency end first."""
PROFILES: Final = ("latency", "throughput")


def knobs(settings_class: type | None) -> dict[str, tuple[Any, ...]]:
    """The settings of an engine's settings class that trade latency for throughput, each
    with its candidates (latency end first); {} for an engine without any."""
    if settings_class is None or not dataclasses.is_dataclass(settings_class):
        return {}
    return {f.name: tuple(f.metadata[TUNE]) for f in dataclasses.fields(settings_class)
            if TUNE in f.metadata}  # fmt: skip


def profile(found: Mapping[str, tuple[Any, ...]], name: str) -> dict[str, Any]:
    """The ``latency`` profile (every candidate list's first) or the ``throughput`` one
    (its last)."""
    return {key: values[0 if name == "latency" else -1] for key, values in found.items()}


def apply(
    name: str,
    classes: Mapping[str, type],
    values: dict[str, dict[str, Any]],
    sources: dict[str, dict[str, str]],
) -> None:
    """Every engine table (``engine.<name>`` of ``classes``) at profile ``name``, but for
    the settings given explicitly, which win; each marked as the profile's. The latency
    profile is the defaults: nothing to set."""
    if name == "latency":
        return
    for section, cls in classes.items():
        if not section.startswith("engine."):
            continue
        for key, value in profile(knobs(cls), name).items():
            if key not in values[section]:
                values[section][key] = value
                sources[section][key] = f"profile {name}"
