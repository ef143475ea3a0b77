"""One row of a stage table, as a typed, frozen record: a :class:`ComparisonRow` per
(stage, implementation), built by :func:`evaluator.comparison.increments.aggregate`, held by
:class:`evaluator.comparison.compare.Comparison` and written as an entry of comparison.json's
``stages`` (:meth:`ComparisonRow.as_dict`).

Each field's ``metadata["doc"]`` says what its key holds: docs/comparison-schema.md is
generated from them (:mod:`evaluator.files.result_schema`). The per-percentile fields are flat
(``increment_p50_ci95``, …), as comparison.json's keys are; a reader that loops over the
percentiles takes them with ``getattr(row, f"increment_{q}_ci95")``.
"""

from dataclasses import dataclass, field
from typing import Any

from evaluator.model.record import as_dict, key_doc

Bounds = list[float]
"""[lo, hi]."""


@dataclass(frozen=True)
class ComparisonRow:
    """The runs of one stage and implementation in a comparison: their percentiles,
    intervals and caveats, and the increment over the nearest stage it builds on."""

    stage: str = field(metadata=key_doc("the stage"))
    impl: str = field(metadata=key_doc("its implementation: builtin, custom, or builtin@real-time"))
    repetitions: int = field(metadata=key_doc("how many runs the row has"))
    p50: float | None = field(metadata=key_doc("the mean of the runs' p50 (ms)"))
    p50_spread: Bounds | None = field(metadata=key_doc("[min, max] of the runs' p50"))
    p95: float | None = field(metadata=key_doc("the mean of the runs' p95 (ms)"))
    p95_spread: Bounds | None = field(metadata=key_doc("[min, max] of the runs' p95"))
    p99: float | None = field(metadata=key_doc("the mean of the runs' p99 (ms)"))
    p99_spread: Bounds | None = field(metadata=key_doc("[min, max] of the runs' p99"))
    ci_method: str | None = field(
        metadata=key_doc(
            'how p50_ci95 and p99_ci95 were found: "within-run" (one run: its summary\'s '
            '`confidence`) or "across runs" (two or more: Student-t over the runs\' values); '
            "null when the runs' summaries have no interval"
        )
    )
    p50_ci95: Bounds | None = field(metadata=key_doc("95 % interval [lo, hi] of the row's p50"))
    p99_ci95: Bounds | None = field(metadata=key_doc("95 % interval [lo, hi] of the row's p99"))
    run_dir: str = field(metadata=key_doc("a representative run: the middle one"))
    run_dirs: list[str] = field(metadata=key_doc("every run of the row"))
    run_rounds: list[int | None] = field(
        metadata=key_doc("the round of each run, in the order of run_dirs (null without rounds)")
    )
    steady: list[str | None] = field(
        metadata=key_doc(
            "each run's steadiness verdict: steady, rising, falling, undetermined (null: not "
            "recorded), in the order of run_dirs"
        )
    )
    run_paces_ms: list[float | None] = field(
        metadata=key_doc(
            "each run's pace: ms one core took for a fixed piece of work around it (null: not "
            "recorded), in the order of run_dirs"
        )
    )
    pace_ms: float | None = field(metadata=key_doc("the median of the runs' paces"))
    warnings: list[str] = field(
        metadata=key_doc('"run_dir: text" for every warning of the runs, deduplicated')
    )
    mark: str = field(metadata=key_doc('"!" when the runs have warnings, else ""'))
    increment_p50: float | None = field(
        metadata=key_doc(
            "p50 − that of the row under increment_over (ms): in rounds, the mean of the "
            "per-round differences, else the difference of the two rows' means; null for the "
            "first stage"
        )
    )
    increment_p50_rounds: list[float] | None = field(
        metadata=key_doc("the per-round differences of p50, in round order (null without rounds)")
    )
    increment_p50_ci95: Bounds | None = field(
        metadata=key_doc("the increment's 95 % interval [lo, hi], unadjusted")
    )
    increment_p50_method: str | None = field(
        metadata=key_doc(
            'how that interval was found: "rounds" (Student-t on the per-round differences, 3 '
            'rounds or more), "welch" (runs made apart, 3 or more of each stage) or '
            '"within-run" (fewer runs: the runs\' own intervals combined, no verdict, "n.v.")'
        )
    )
    increment_p50_p: float | None = field(
        metadata=key_doc("the test's two-sided p-value (null without a test)")
    )
    increment_p95: float | None = field(metadata=key_doc("the same for p95"))
    increment_p95_rounds: list[float] | None = field(metadata=key_doc("the same for p95"))
    increment_p99: float | None = field(metadata=key_doc("the same for p99"))
    increment_p99_rounds: list[float] | None = field(metadata=key_doc("the same for p99"))
    increment_p99_ci95: Bounds | None = field(metadata=key_doc("the same for p99"))
    increment_p99_method: str | None = field(metadata=key_doc("the same for p99"))
    increment_p99_p: float | None = field(metadata=key_doc("the same for p99"))
    increment_p50_within_pace: bool | None = field(
        metadata=key_doc(
            "whether a host drift of the comparison's pace_drift could explain the increment "
            "(null without paces)"
        )
    )
    increment_p99_within_pace: bool | None = field(metadata=key_doc("the same for p99"))
    increment_over: str | None = field(
        metadata=key_doc(
            'the "stage/impl" the increments are taken over: the nearest stage it builds on '
            "with a row of the same engine (the floor, whatever the engine), its row of the "
            "same implementation, else its built-in row (null for the first); "
            '"engine:stage/impl" in a table of several engines'
        )
    )
    increment_p50_p_adjusted: float | None = field(
        metadata=key_doc(
            "increment_p50_p adjusted (Bonferroni) across the table's tests (null: no verdict)"
        )
    )
    increment_p50_ci95_joint: Bounds | None = field(
        metadata=key_doc(
            "the interval the verdict is made with: 95 % jointly over the table's tests, "
            "wider than increment_p50_ci95 (null: no verdict)"
        )
    )
    increment_p50_significant: bool | None = field(
        metadata=key_doc("whether increment_p50_ci95_joint excludes 0 (null: no verdict)")
    )
    increment_p99_p_adjusted: float | None = field(metadata=key_doc("the same for p99"))
    increment_p99_ci95_joint: Bounds | None = field(metadata=key_doc("the same for p99"))
    increment_p99_significant: bool | None = field(metadata=key_doc("the same for p99"))
    first_update_p50: float | None = field(
        default=None,
        metadata=key_doc(
            "a stage written at every update (tumbling-union): the mean of the runs' p50 of "
            "each window's first update, from the latest input it carries (its p50 is the "
            "complete window's); null for the others"
        ),
    )
    first_update_p99: float | None = field(default=None, metadata=key_doc("the same for p99"))
    updates_per_window: float | None = field(
        default=None,
        metadata=key_doc("the mean over the runs of the updates a window took to complete"),
    )
    engine: str | None = field(
        default=None,
        metadata=key_doc(
            "the stream engine of the row's runs (a row holds one engine's runs); null for "
            "runs made before engines were named"
        ),
    )
    recovery_s: list[float | None] | None = field(
        default=None,
        metadata=key_doc(
            "runs with disturbances (bursts, a fault): each run's median recovery_s over its "
            "windows (summary.json's recovery; null: not recovered), in the order of "
            "run_dirs; null when no run of the row had a disturbance"
        ),
    )
    settled_s: list[float | None] | None = field(
        default=None,
        metadata=key_doc(
            "the same for settled_s, the time to a steady level wherever it is (null: none)"
        ),
    )
    settled_offset: list[float | None] | None = field(
        default=None,
        metadata=key_doc(
            "the same for the offset of that level from the p50 before (0.31: 31 % above)"
        ),
    )

    def as_dict(self) -> dict[str, Any]:
        """The row as comparison.json's ``stages`` holds it."""
        return as_dict(self)
