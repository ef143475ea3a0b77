"""summary.json's ``recovery`` section, and what its readers show of it: a comparison
row's and a history entry's figures, the sentences of a window's level, settle time and
cause, and the run's warnings."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluator.config import SETTLE_WINDOWS
from evaluator.recovery.windows import (
    BY_INPUT,
    BY_OUTPUT,
    HOLD_S,
    Recovery,
    Window,
    recoveries,
)
from evaluator.text.number_format import format_estimate


def summarise(found: Sequence[Recovery]) -> dict[str, Any]:
    """Over the windows: how many recovered and settled (at a new level), the median and
    largest recovery, settle time and peak, and the median offset of the settled levels."""
    times = [r.recovery_s for r in found if r.recovery_s is not None]
    peaks = [r.peak_ms for r in found if r.peak_ms is not None]
    levels = [r.steady_level for r in found if r.steady_level is not None]
    settle_times = [lv.after_s for lv in levels]
    offsets = [lv.offset for lv in levels if lv.offset is not None]
    return {
        "windows": len(found),
        "recovered": sum(r.recovered is True for r in found),
        "not_recovered": sum(r.recovered is False for r in found),
        "no_baseline": sum(r.recovered is None for r in found),
        "recovery_s_median": float(np.median(times)) if times else None,
        "recovery_s_max": max(times) if times else None,
        "peak_ms_median": float(np.median(peaks)) if peaks else None,
        "peak_ms_max": max(peaks) if peaks else None,
        "settled": len(levels),
        "new_level": sum(lv.level == "new" for lv in levels),
        "not_settled": sum(r.settled is False for r in found),
        "settled_s_median": float(np.median(settle_times)) if settle_times else None,
        "settled_s_max": max(settle_times) if settle_times else None,
        "offset_median": float(np.median(offsets)) if offsets else None,
    }


def section(
    series: pd.DataFrame,
    windows: Sequence[Window],
    measured_from_ms: int,
    measured_to_ms: int,
    baseline_s: float,
    threshold: float,
    usage: pd.DataFrame | None = None,
    by_input: pd.DataFrame | None = None,
) -> dict[str, Any] | None:
    """summary.json's ``recovery``: the windows starting in the measured period and their
    summary; None when the run has no disturbance windows.

    Every window takes part (the next one ends a recovery's search, each is left out
    of the baselines); only those that start in the measured period are reported. A
    settled level's stretch ends with the measured period. A partial fault's window is
    judged on ``by_input`` (the series by the outputs' latest inputs' seconds) and its
    p99 (:data:`BY_INPUT`), every other on ``series``' p50.
    """
    if not windows:
        return None
    judged = recoveries(series, windows, baseline_s, threshold, measured_to_ms, usage)
    if by_input is not None and any(w.partial for w in windows):
        waited = recoveries(by_input, windows, baseline_s, threshold, measured_to_ms, usage,
                            column="latency_p99_ms")  # fmt: skip
        judged = [w if r.window.partial else r for r, w in zip(judged, waited, strict=True)]
    found = [r for r in judged if measured_from_ms <= r.window.start_ms <= measured_to_ms]
    return {
        "baseline_window_s": baseline_s,
        "threshold": threshold,
        "hold_s": HOLD_S,
        "settle_windows": SETTLE_WINDOWS,
        "windows": [
            {**r.as_dict(), "series": BY_INPUT if r.window.partial else BY_OUTPUT} for r in found
        ],
        "summary": summarise(found),
    }


FIGURES = ("recovery_s", "settled_s", "settled_offset")
"""A run's figures of recovery as a comparison row and the history carry them."""


def figures(recovery: dict[str, Any] | None) -> dict[str, float | None] | None:
    """A run's :data:`FIGURES` from summary.json's ``recovery``: the medians over its windows
    of the recovery time, the time to a steady level and that level's offset from before
    (None where no window had one); None for a run without disturbances."""
    if not recovery or not recovery.get("windows"):
        return None
    summary = recovery["summary"]
    return {
        "recovery_s": summary.get("recovery_s_median"),
        "settled_s": summary.get("settled_s_median"),
        "settled_offset": summary.get("offset_median"),
    }


def figures_text(found: dict[str, float | None]) -> str:
    """:func:`figures` in words: "recovered 3.4 s", "not recovered; settled 2 s, +31 %"."""
    recovery, settled, offset = (found[k] for k in FIGURES)
    parts = ["not recovered" if recovery is None else f"recovered {recovery:g} s"]
    if settled is not None and settled != recovery:
        parts.append(f"settled {settled:g} s" + ("" if offset is None else f", {_percent(offset)}"))
    return "; ".join(parts)


def statistic(windows: Sequence[dict[str, Any]]) -> str:
    """What the windows' figures are of, in words: "p50", "p99 by input second" (a fault
    of a part of the job), or both."""
    found = ["p99 by input second" if w.get("series") == BY_INPUT else "p50" for w in windows]
    return " / ".join(dict.fromkeys(found)) or "p50"


def settled_text(window: dict[str, Any]) -> str | None:
    """Where one window of summary.json's ``recovery`` settled, in words: "settled 2.1 s
    after the broker-restart at +31 % [+24–+38 %] of the p50 before (287 ms)"; None when it
    did not settle."""
    if window.get("settled_s") is None:
        return None
    text = f"settled {window['settled_s']:g} s after the {window['kind']}"
    level = f"{window['settled_p50_ms']:,.0f} ms"
    if window["offset"] is None:
        return f"{text} at {level}"
    bounds = window["offset_ci95"]
    interval = f" [{_percent(bounds[0], '')}–{_percent(bounds[1])}]" if bounds else ""
    where = " the level before," if window["level"] == "before" else ""
    doubt = ", not shown to differ from it" if window["level"] == "undetermined" else ""
    offset = _percent(window["offset"])
    return (
        f"{text} at{where} {offset}{interval} of the {statistic([window])} before ({level}){doubt}"
    )


def level_text(window: dict[str, Any]) -> str:
    """A table cell for where a window settled: "298 ms [291–307], +39 % [+32–+45 %]: new
    level"; "not settled" (False), "-" (too short to tell)."""
    if window.get("settled") is not True:
        return "not settled" if window.get("settled") is False else "-"
    text = format_estimate(window["settled_p50_ms"], window["settled_p50_ci95"], unit=" ms")
    if window["offset"] is None:
        return text
    bounds = window["offset_ci95"]
    interval = f" [{_percent(bounds[0], '')}–{_percent(bounds[1])}]" if bounds else ""
    kind = {"before": "the level before", "new": "new level"}.get(
        window["level"], "not shown to differ from before"
    )
    return f"{text}, {_percent(window['offset'])}{interval}: {kind}"


def cause_text(window: dict[str, Any]) -> str | None:
    """The disturbed process's CPU and GC before and after, in words: "broker: CPU 10 → 16 %
    of a core, GC 2 → 2 ms/s (before → after)"; None without them."""
    cause = window.get("cause")
    if not cause:
        return None
    parts = []
    for key, what, unit in (("cpu_percent", "CPU", "% of a core"), ("gc_ms_per_s", "GC", "ms/s")):
        before, after = cause[key]
        if before is not None and after is not None:
            parts.append(f"{what} {before:g} → {after:g} {unit}")
    return f"{cause['process']}: {', '.join(parts)} (before → after)" if parts else None


def _percent(share: float, unit: str = " %") -> str:
    """A share as a signed whole percentage: "+31 %", "−4 %", "±0 %"."""
    value = round(share * 100)
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    return f"{sign}{abs(value)}{unit}"


def warnings(recovery: dict[str, Any] | None) -> list[str]:
    """A warning when latency did not come back after some window: one for windows after
    which it settled at a new level (saying where), one for those after which it neither
    recovered nor settled."""
    if recovery is None:
        return []
    windows = recovery["windows"]
    total = recovery["summary"]["windows"]
    elsewhere = [w for w in windows if w.get("level") == "new"]
    stuck = [w for w in windows if w["recovered"] is False and w.get("level") != "new"]
    found = []
    if elsewhere:
        found.append(
            f"latency did not come back to the level before after {len(elsewhere)} of {total} "
            f"disturbance windows, but settled at another: "
            f"{'; '.join(str(settled_text(w)) for w in elsewhere[:3])}"
            + ("; …" if len(elsewhere) > 3 else "")
        )
    if stuck:
        kinds = sorted({w["kind"] for w in stuck})
        found.append(
            f"latency had not recovered after {len(stuck)} of {total} disturbance windows "
            f"({', '.join(kinds)}) before the next one or the end of the run: its per-second "
            f"{statistic(stuck)} was not back within {recovery['threshold']:.0%} of the level "
            f"before for {HOLD_S} s"
        )
    return found
