"""One evaluated run as a row of a comparison: its stage, percentiles, within-run
intervals, warnings, steadiness and pace, read from its summary.json.

The stage table (:mod:`evaluator.comparison.compare`) and the A/B comparison
(:mod:`evaluator.comparison.ab`) both start from these rows; a summary this version
cannot read is refused here, naming the file, before any figure is computed from it.
"""

import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator.model.summary_file import load_summary
from evaluator.recovery import section as recovery
from ground import rundir
from ground.errors import EvaluationError
from ground.stages import PROCESSING_TIME, STAGES

if TYPE_CHECKING:
    from evaluator.model.result import Summary

QUANTILES = ("p50", "p95", "p99")
CI_QUANTILES = ("p50", "p99")
"""The percentiles a run's ``confidence`` section gives intervals for."""
VERDICTS = ("steady", "rising", "falling", "undetermined")


def run_row(run_dir: Path, summary: "Summary | None" = None) -> dict[str, Any]:
    """stage, impl (:func:`variant`), p50, p95, p99, run_dir, warnings, steady,
    p50_ci95, p99_ci95, pace_ms, for a stage written at every update
    first_update_p50, first_update_p99 and updates_per_window (else None), and for a run
    with disturbances its recovery (:func:`evaluator.recovery.section.figures`, else None) of one
    evaluated run (``summary``: its summary.json, loaded when not given).

    EvaluationError naming the file when summary.json is missing, not JSON, of another
    schema version or not whole (:func:`evaluator.model.summary_file.load_summary`), or when a
    figure the row takes is missing or of the wrong type. Intervals are None where the
    summary has none (a summary of the former Spark evaluator, a period too short for
    its sections), steadiness where it has no verdict, the pace for a run not made by
    ``stagebench run``.
    """
    path = Path(run_dir) / rundir.SUMMARY
    if summary is None:
        summary = load_summary(run_dir)
    try:
        run, lat = summary.run, summary.latency_ms
        confidence = summary.confidence or {}
        updates = summary.updates or {}
        row = {
            "stage": run["stage"],
            "engine": run.get("engine"),
            "impl": variant(run["impl"], trigger(summary)),
            **{q: _number(lat[q]) for q in QUANTILES},
            "run_dir": str(run_dir),
            "warnings": [str(w) for w in _list(summary.warnings, "warnings")],
            "steady": _verdict(summary.steady_state),
            **{f"{q}_ci95": _bounds(confidence.get(q), q) for q in CI_QUANTILES},
            "pace_ms": run_pace(summary),
            **{
                f"first_update_{q}": _number((updates.get("first_update_ms") or {}).get(q))
                for q in CI_QUANTILES
            },
            "updates_per_window": _number((updates.get("per_window") or {}).get("mean")),
            "recovery": recovery.figures(summary.recovery),
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(
            f"{path} is not a stagebench summary this version can compare "
            f"(missing or invalid {err}); re-evaluate the run"
        ) from err
    if row["stage"] not in STAGES:
        raise EvaluationError(f"{path}: unknown stage {row['stage']!r} (known: {STAGES})")
    return row


def variant(impl: str, trigger: str | None) -> str:
    """A row's implementation: ``builtin``, ``custom``, or ``builtin@MODE`` for a run in
    an execution mode other than every engine's (``builtin@real-time``: Spark's real-time
    mode), which a table keeps apart from the runs in that one."""
    return f"{impl}@{trigger}" if trigger not in (None, PROCESSING_TIME) else impl


def trigger(summary: "Summary") -> str | None:
    """The run's ``[pipeline] trigger`` (None: not recorded, as by the floor)."""
    trigger: str | None = (summary.config.get("pipeline") or {}).get("trigger")
    return trigger


def run_pace(summary: "Summary") -> float | None:
    """One run's pace, ms (summary.json's ``machine.pace``): the mean of its timings
    before and after (either alone when the other is missing); None without one (a run
    not made by ``stagebench run``)."""
    pace = (summary.machine or {}).get("pace")
    values = [_number(pace.get(k)) for k in ("before_ms", "after_ms")] if pace else []
    known = [v for v in values if v]
    return round(statistics.fmean(known), 2) if known else None


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"percentile {value!r}")
    return float(value)


def _list(value: Any, name: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{name} {value!r}")
    return value


def _bounds(value: Any, q: str) -> list[float] | None:
    """[lo, hi] of a ``confidence`` entry; None when absent."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"confidence.{q} {value!r}")
    lo, hi = (_number(v) for v in value)
    return [lo, hi] if lo is not None and hi is not None else None


def _verdict(steady_state: Any) -> str | None:
    if steady_state is None:
        return None
    verdict: str | None = steady_state.get("verdict")
    if verdict not in VERDICTS:
        raise ValueError(f"steady_state.verdict {verdict!r}")
    return verdict
