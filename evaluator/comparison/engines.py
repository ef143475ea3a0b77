"""Engines side by side: for every stage two or more engines ran, the difference of each
pair's p50 and p99 with its interval and test, judged like an increment
(:func:`evaluator.comparison.increments.increment`: in rounds on the per-round
differences, runs made apart by Welch, fewer than three runs without a verdict), and
only between rows of the same kind of operator: a window closed by the watermark is not
compared with one written as soon as its data are complete. A row run in another
execution mode (Spark's real-time mode: ``builtin@real-time``) is an engine column of its
own, ``spark@real-time``, compared with the other engines' rows of the implementation it
runs and with its own engine's micro-batches.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from evaluator.comparison.rows import CI_QUANTILES
from evaluator.model.record import key_doc
from ground.stages import stage

STATELESS = "stateless"
JOIN = "join"
CLOSED = "window closed by the watermark"
COMPLETE = "window written once complete"
UPDATED = "window written at every update"
KINDS = (STATELESS, JOIN, CLOSED, COMPLETE, UPDATED)
"""The kinds of operator a row's stage is: cross-engine verdicts compare only rows of one."""


def operator_kind(stage_name: str, impl: str) -> str:
    """The kind of operator the stage ``stage_name`` runs as ``impl`` ("custom",
    "builtin@real-time", …)."""
    found = stage(stage_name)
    if not found.stateful:
        return STATELESS
    if not found.window:
        return JOIN
    if found.updates:
        return UPDATED
    return COMPLETE if impl.startswith("custom") else CLOSED


@dataclass(frozen=True)
class EngineDifference:
    """One pair of engines on one stage: the percentiles of engine minus those of over."""

    stage: str = field(metadata=key_doc("the stage both engines ran"))
    impl: str = field(metadata=key_doc("its implementation (the same on both)"))
    kind: str = field(metadata=key_doc(f"its kind of operator: {', '.join(KINDS)}"))
    engine: str = field(metadata=key_doc("the engine whose percentiles come first"))
    over: str = field(metadata=key_doc("the engine they are taken over"))
    p50: float | None = field(metadata=key_doc("engine's mean p50 minus over's (ms)"))
    p50_ci95: list[float] | None = field(metadata=key_doc("its 95 % interval [lo, hi]"))
    p50_method: str | None = field(
        metadata=key_doc('how: "rounds", "welch" or "within-run" (no verdict)')
    )
    p50_p: float | None = field(metadata=key_doc("the test's two-sided p (null: no test)"))
    p50_p_adjusted: float | None = field(
        metadata=key_doc("p adjusted (Bonferroni) with the table's other tests (null: no test)")
    )
    p50_ci95_joint: list[float] | None = field(
        metadata=key_doc(
            "the interval the verdict is made with: 95 % jointly with the table's other tests "
            "(null: no test)"
        )
    )
    p50_significant: bool | None = field(
        metadata=key_doc("whether ci95_joint excludes 0 (null: no test)")
    )
    p99: float | None = field(metadata=key_doc("the same for p99"))
    p99_ci95: list[float] | None = field(metadata=key_doc("the same for p99"))
    p99_method: str | None = field(metadata=key_doc("the same for p99"))
    p99_p: float | None = field(metadata=key_doc("the same for p99"))
    p99_p_adjusted: float | None = field(metadata=key_doc("the same for p99"))
    p99_ci95_joint: list[float] | None = field(metadata=key_doc("the same for p99"))
    p99_significant: bool | None = field(metadata=key_doc("the same for p99"))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Key = tuple[str | None, str, str]
Runs = list[dict[str, Any]]


def column(engine: str, impl: str) -> tuple[str, str]:
    """(engine column, implementation) of a row: ``("spark@real-time", "builtin")`` for
    ``("spark", "builtin@real-time")``, a row of another execution mode; else as given."""
    base, mode = impl.split("@", 1) if "@" in impl else (impl, "")
    return (f"{engine}@{mode}" if mode else engine), base


def engine_differences(
    groups: dict[Key, Runs], increment: Callable[[Runs, Runs, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every pair of engine columns (:func:`column`) with runs of the same stage and
    implementation, in the order of their names, as :class:`EngineDifference` keys without
    the verdicts' (with each test instead, for
    :func:`~evaluator.comparison.increments.judge`); ``increment(runs, base_runs, q)``
    judges one difference."""
    out = []
    by_stage: dict[tuple[str, str], dict[str, Key]] = {}
    for group in groups:
        engine, stage_name, impl = group
        if engine is not None and stage(stage_name).builds_on is not None:
            name, base_impl = column(engine, impl)
            by_stage.setdefault((stage_name, base_impl), {})[name] = group
    for (stage_name, impl), columns in by_stage.items():
        for over, engine in combinations(sorted(columns), 2):
            runs, base = groups[columns[engine]], groups[columns[over]]
            entry: dict[str, Any] = {
                "stage": stage_name,
                "impl": impl,
                "kind": operator_kind(stage_name, columns[engine][2]),
                "engine": engine,
                "over": over,
            }
            for q in CI_QUANTILES:
                found = increment(runs, base, q)
                entry[q] = found[f"increment_{q}"]
                for key in ("ci95", "method", "p", "test"):
                    entry[f"{q}_{key}"] = found[f"increment_{q}_{key}"]
            out.append(entry)
    return out
