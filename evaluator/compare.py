"""Cumulative comparison of evaluated runs, stage by stage (docs/method.md#sources).

Runs are grouped by (stage, implementation): one row per group, ordered by the
stage ladder, with the median of each percentile across repetitions and its
spread (min–max). The increment of a row is the difference of its percentiles
and those of the nearest earlier stage of the ladder present in the comparison
— its row of the same implementation, else its built-in row (custom tumbling
builds on the built-in join). It is a difference of percentiles, not a
percentile of per-record differences (the runs are separate), and labelled as
such everywhere it is shown.

A comparison carries its caveats: every row lists the warnings of its runs,
p50 and p99 carry 95 % intervals (one run: the run's own bootstrap interval;
several: across the runs, :mod:`evaluator.confidence`), increments carry the
interval of the difference and whether it excludes 0, and runs that differ in
more than stage and implementation (rate, workload, settings, Kafka) are
refused unless the caller allows a mixed comparison, which then names the
differences above the table. The machine's pace (a fixed piece of work timed on one
core before and after each run, summary.json's ``machine.pace``) is shown per row, and
a spread of more than :data:`PACE_SPREAD_WARN` across the runs is said above the table:
differences of that size between rows may be the host's.
"""

import json
import logging
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluator import plots
from evaluator.confidence import difference_interval, runs_interval, significant
from evaluator.latency import IN_RANGE, LATENCY
from ground import rundir
from ground.errors import EvaluationError
from ground.stages import STAGES

log = logging.getLogger(__name__)

QUANTILES = ("p50", "p95", "p99")
# the percentiles a run's ``confidence`` section gives intervals for
CI_QUANTILES = ("p50", "p99")
BOOTSTRAP = "bootstrap"
ACROSS_RUNS = "across runs"
VERDICTS = ("steady", "rising", "falling")
MARK = "!"
INCREMENT_NOTE = "stage pXX − pXX of the stage under 'over' (difference of percentiles, ms)"
BASELINE_IMPL = "builtin"
PACE_SPREAD_WARN = 0.15
"""Say so when the slowest run's pace is more than this share above the fastest's: the
same join gave p50 356 ms in one suite and 494–530 ms in the two around it, with CPU steal
under 1 % of a core. Three runs in a row on an idle host spanned 12 %: timing noise."""

# What two runs of one comparison must share besides stage and implementation:
# these keys of summary.json's ``run`` section, and every key of these ``config``
# sections but the ones below.
RUN_KEYS = ("rate", "workload", "duration_s", "bootstrap")
CONFIG_SECTIONS = ("run", "publisher", "pipeline", "evaluator")
NOT_COMPARED = {
    # per run by design, or a copy of a value compared already (run.rate,
    # run.bootstrap — the Kafka actually used —, [run] master, [evaluator] warmup_s)
    "run": {"stage", "impl", "results_dir", "rate", "workload", "duration_s", "bootstrap",
            "warmup_s"},
    "publisher": {"speed_topic", "flow_topic", "rate", "workload", "duration_s"},
    "pipeline": {"stage", "impl", "run_id", "output_topic", "speed_topic", "flow_topic",
                 "checkpoint_dir", "bootstrap", "master"},
    # presentation only: no number depends on them
    "evaluator": {"plots", "log_scale"},
}  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """The rows of a comparison and what differs between its runs besides stage and
    implementation (empty when the runs are comparable)."""

    rows: list[dict[str, Any]]
    differences: list[str] = field(default_factory=list)

    @property
    def paces_ms(self) -> list[float]:
        """The pace of every run that recorded one (:func:`run_pace`)."""
        return [p for r in self.rows for p in r["run_paces_ms"] if p]

    @property
    def pace_spread(self) -> float | None:
        """Slowest over fastest run's pace − 1 (None: fewer than two runs with a pace)."""
        paces = self.paces_ms
        return round(max(paces) / min(paces) - 1, 4) if len(paces) >= 2 else None

    @property
    def pace_note(self) -> str | None:
        """The caveat when the runs' pace spread is above :data:`PACE_SPREAD_WARN`."""
        if (spread := self.pace_spread) is None or spread <= PACE_SPREAD_WARN:
            return None
        fastest, slowest = min(self.paces_ms), max(self.paces_ms)
        return (
            f"the machine's pace varied by {spread * 100:.0f} % across these runs (a fixed "
            f"piece of work took {fastest:g} to {slowest:g} ms on one core; warn above "
            f"{PACE_SPREAD_WARN * 100:.0f} %): differences of that size between rows may be the "
            "host's, not the pipeline's"
        )


def compare(run_dirs: Iterable[Path | str], allow_mixed: bool = False) -> Comparison:
    """One row per (stage, impl) of the evaluated runs, in ladder order, with increments.

    Keys of a row: stage, impl, repetitions, p50, p95, p99 (medians across the
    repetitions), p50_spread, p95_spread, p99_spread ([min, max]),
    increment_p50, increment_p95, increment_p99, increment_over (the
    "stage/impl" the increments are taken against, None for the first stage),
    run_dir (a representative run: the middle one) and run_dirs (all of them);
    and its caveats:

    - warnings: "run_dir: text" for every warning of its runs (deduplicated),
      mark: :data:`MARK` when there is any, else "";
    - p50_ci95, p99_ci95: [lo, hi], 95 % interval of the row's percentile, and
      ci_method: :data:`BOOTSTRAP` (one run: its summary's ``confidence``) or
      :data:`ACROSS_RUNS` (two or more: Student-t over the runs' values);
      None when unknown (runs evaluated before intervals were recorded);
    - increment_p50_ci95, increment_p99_ci95: [lo, hi] of the increment
      (normal approximation from both rows' intervals) and
      increment_p50_significant, increment_p99_significant: whether it
      excludes 0; None when either interval is unknown;
    - steady: the steadiness verdict of each run ("steady", "rising",
      "falling"; None when not recorded), in the order of run_dirs;
    - run_paces_ms: each run's pace (:func:`run_pace`; None when not recorded),
      in the order of run_dirs, and pace_ms: their median.

    ``Comparison.pace_spread`` is the spread of the paces of all the runs.

    Runs that differ in more than stage and implementation (:func:`differences`)
    are an EvaluationError naming the differences, unless ``allow_mixed``: then
    the comparison carries them in ``Comparison.differences``.
    """
    run_dirs = [Path(d) for d in run_dirs]
    summaries = {str(d): read_summary(d) for d in run_dirs}
    runs = [run_row(d, summaries[str(d)]) for d in run_dirs]
    rows = aggregate(runs)
    found = differences(summaries)
    if found and not allow_mixed:
        raise EvaluationError(
            "the runs differ in more than stage and implementation, so their increments "
            f"would mix conditions: {'; '.join(found)}. Compare runs made with the same "
            "settings, or allow a mixed comparison (stagebench compare --allow-mixed)"
        )
    return Comparison(rows, found)


def read_summary(run_dir: Path) -> Any:
    """summary.json of ``run_dir``; EvaluationError naming the file when missing or not JSON."""
    path = Path(run_dir) / rundir.SUMMARY
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as err:
        raise EvaluationError(f"{path} not found: evaluate the run first") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise EvaluationError(f"{path} is not valid JSON: {err}") from err


def run_row(run_dir: Path, summary: Any = None) -> dict[str, Any]:
    """stage, impl, p50, p95, p99, run_dir, warnings, steady, p50_ci95 and p99_ci95
    of one evaluated run (``summary``: its summary.json, read when not given).

    EvaluationError naming the file when summary.json is missing, not JSON, or
    not a summary this version understands (foreign or older schema). Runs
    evaluated before intervals and steadiness were recorded have None there.
    """
    path = Path(run_dir) / rundir.SUMMARY
    if summary is None:
        summary = read_summary(run_dir)
    try:
        run, lat = summary["run"], summary["latency_ms"]
        confidence = summary.get("confidence") or {}
        row = {
            "stage": run["stage"],
            "impl": run.get("impl") or BASELINE_IMPL,
            **{q: _number(lat[q]) for q in QUANTILES},
            "run_dir": str(run_dir),
            "warnings": [str(w) for w in _list(summary.get("warnings"), "warnings")],
            "steady": _verdict(summary.get("steady_state")),
            **{f"{q}_ci95": _bounds(confidence.get(q), q) for q in CI_QUANTILES},
            "pace_ms": run_pace((summary.get("machine") or {}).get("pace")),
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise EvaluationError(
            f"{path} is not a stagebench summary this version can compare "
            f"(missing or invalid {err}); re-evaluate the run"
        ) from err
    if row["stage"] not in STAGES:
        raise EvaluationError(f"{path}: unknown stage {row['stage']!r} (known: {STAGES})")
    return row


def run_pace(pace: Any) -> float | None:
    """One run's pace, ms: the mean of its timings before and after (either alone when
    the other is missing); None for runs made before pace was recorded."""
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
    if value is None:
        return []
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
    verdict = steady_state.get("verdict")
    if verdict not in VERDICTS:
        raise ValueError(f"steady_state.verdict {verdict!r}")
    return verdict


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (stage, impl) from per-run rows (:func:`run_row`): medians,
    spreads, intervals, caveats and increments; ordered by the stage ladder,
    then implementation."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["stage"], row["impl"]), []).append(row)
    out: list[dict[str, Any]] = []
    for stage, impl in sorted(groups, key=lambda k: (STAGES.index(k[0]), str(k[1]))):
        runs = groups[(stage, impl)]
        entry: dict[str, Any] = {"stage": stage, "impl": impl, "repetitions": len(runs)}
        for q in QUANTILES:
            values = [r[q] for r in runs if r[q] is not None]
            entry[q] = statistics.median(values) if values else None
            entry[f"{q}_spread"] = [min(values), max(values)] if values else None
        entry.update(_intervals(runs))
        entry["run_dir"] = runs[len(runs) // 2]["run_dir"]
        entry["run_dirs"] = [r["run_dir"] for r in runs]
        entry["steady"] = [r["steady"] for r in runs]
        entry["run_paces_ms"] = [r["pace_ms"] for r in runs]
        paces = [p for p in entry["run_paces_ms"] if p]
        entry["pace_ms"] = statistics.median(paces) if paces else None
        warnings = (f"{r['run_dir']}: {w}" for r in runs for w in r["warnings"])
        entry["warnings"] = list(dict.fromkeys(warnings))
        entry["mark"] = MARK if entry["warnings"] else ""
        out.append(entry)
    for entry in out:
        base = _baseline(entry, out)
        for q in QUANTILES:
            before = base[q] if base is not None else None
            entry[f"increment_{q}"] = (
                entry[q] - before if entry[q] is not None and before is not None else None
            )
        for q in CI_QUANTILES:
            interval = _increment_interval(entry, base, q)
            entry[f"increment_{q}_ci95"] = interval
            entry[f"increment_{q}_significant"] = (
                significant((entry[f"increment_{q}"], *interval)) if interval else None
            )
        entry["increment_over"] = f"{base['stage']}/{base['impl']}" if base else None
    return out


def _intervals(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """p50_ci95, p99_ci95 and ci_method of a group of runs: across the runs when two
    or more have the percentile, else the one run's bootstrap interval, else None."""
    out: dict[str, Any] = {"ci_method": None}
    for q in CI_QUANTILES:
        measured = [r for r in runs if r[q] is not None]
        out[f"{q}_ci95"] = None
        if len(measured) >= 2:
            _, lo, hi = runs_interval(np.array([r[q] for r in measured]))
            out[f"{q}_ci95"], out["ci_method"] = [float(lo), float(hi)], ACROSS_RUNS
        elif measured and measured[0][f"{q}_ci95"] is not None:
            out[f"{q}_ci95"], out["ci_method"] = list(measured[0][f"{q}_ci95"]), BOOTSTRAP
    return out


def _increment_interval(
    entry: dict[str, Any], base: dict[str, Any] | None, q: str
) -> list[float] | None:
    """[lo, hi] of entry's pXX increment over ``base``; None when an interval is unknown."""
    if base is None or entry[f"increment_{q}"] is None:
        return None
    a, b = base[f"{q}_ci95"], entry[f"{q}_ci95"]
    if a is None or b is None:
        return None
    _, lo, hi = difference_interval((base[q], *a), (entry[q], *b))
    return [float(lo), float(hi)] if math.isfinite(lo) and math.isfinite(hi) else None


def _baseline(entry: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The row ``entry``'s increments are taken against: the nearest earlier stage
    with rows, its row of the same impl, else its built-in row (else None)."""
    index = STAGES.index(entry["stage"])
    earlier = [r for r in rows if STAGES.index(r["stage"]) < index]
    if not earlier:
        return None
    nearest = max(STAGES.index(r["stage"]) for r in earlier)
    candidates = {r["impl"]: r for r in earlier if STAGES.index(r["stage"]) == nearest}
    return candidates.get(entry["impl"]) or candidates.get(BASELINE_IMPL)


# --- what differs between the runs ----------------------------------------------


_ABSENT = object()


def differences(summaries: Mapping[str, Any]) -> list[str]:
    """What differs between runs besides stage and implementation, one line per setting.

    ``summaries`` maps each run directory to its summary.json. Compared: the
    ``run`` section's rate, workload, duration_s and bootstrap (the Kafka used),
    and every key of the ``config`` sections run, publisher, pipeline and
    evaluator (nested tables key by key) except those a run sets for itself
    (stage, impl, run id, topics, checkpoint and results directories), copies
    of a value compared already, and the evaluator's plot options
    (:data:`NOT_COMPARED`). A line reads
    ``rate: 400 in 3 runs, 800 in 1 run (20261101T…-join-ab12)``: each value
    with its number of runs, naming the runs of all values but the most common.
    """
    settings = {run_dir: _settings(summary) for run_dir, summary in summaries.items()}
    names: dict[str, None] = {}
    for values in settings.values():
        names.update(dict.fromkeys(values))
    lines = []
    for name in names:
        groups: dict[str, list[str]] = {}
        for run_dir, values in settings.items():
            groups.setdefault(_shown(values.get(name, _ABSENT)), []).append(run_dir)
        if len(groups) > 1:
            lines.append(f"{name}: {_describe(groups)}")
    return lines


def _settings(summary: Any) -> dict[str, Any]:
    """The compared settings of one summary: name → value (numbers as floats)."""
    if not isinstance(summary, dict):
        return {}
    run = summary.get("run") or {}
    out = {key: run[key] for key in RUN_KEYS if key in run}
    config = summary.get("config") or {}
    for section in CONFIG_SECTIONS:
        values = config.get(section) or {}
        for key, value in values.items():
            if key not in NOT_COMPARED[section]:
                out.update(_flatten(f"[{section}] {key}", value))
    return out


def _flatten(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(f"{name}.{key}", sub))
        return out
    return {name: value}


def _shown(value: Any) -> str:
    """A setting's value as a reader sees it; equal values read the same (400 == 400.0)."""
    if value is _ABSENT:
        return "absent"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _describe(groups: dict[str, list[str]]) -> str:
    """Values with their number of runs, "A in 3 runs, B in 1 run (name)": the most
    common first, the runs of every other value named (of every value when no
    single one is most common)."""
    ordered = sorted(groups, key=lambda v: -len(groups[v]))  # stable: first seen first on ties
    top = len(groups[ordered[0]])
    unique_top = sum(1 for v in ordered if len(groups[v]) == top) == 1
    parts = []
    for i, value in enumerate(ordered):
        dirs = groups[value]
        part = f"{value} in {len(dirs)} run{'s' if len(dirs) > 1 else ''}"
        if i > 0 or not unique_top:
            part += f" ({', '.join(Path(d).name for d in dirs)})"
        parts.append(part)
    return ", ".join(parts)


# --- rendering ------------------------------------------------------------------


def format_cell(value: Any) -> str:
    """One table cell: "-" for None, numbers with thousands separators, floats to 0.1."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def format_ms(value: float | None, signed: bool = False, digits: int | None = None) -> str:
    """A latency in ms for the comparison tables: whole ms from 10 ms, else 0.1 ms
    (or ``digits`` decimals); a true minus sign; "+" on positive values when
    ``signed``; "-" for None."""
    if value is None:
        return "-"
    text = f"{abs(value):,.{_digits(value) if digits is None else digits}f}"
    if value < 0 and text.strip("0.,"):
        return "−" + text
    return ("+" if signed else "") + text


def _digits(value: float) -> int:
    return 0 if abs(value) >= 9.95 else 1


def format_interval(
    bounds: list[float] | None, signed: bool = False, digits: int | None = None
) -> str:
    """The interval as "[lo–hi]" with :func:`format_ms`; "" when unknown."""
    if bounds is None:
        return ""
    lo, hi = (format_ms(b, signed, digits) for b in bounds)
    return f"[{lo}–{hi}]"


def _with_interval(value: float | None, bounds: list[float] | None, signed: bool = False) -> str:
    """The value and its interval, "448 [431–466]", all to one precision: whole ms
    when any of them reaches 10 ms (finer digits would be noise), else 0.1 ms."""
    if value is None:
        return "-"
    digits = min(_digits(v) for v in (value, *(bounds or ())))
    interval = format_interval(bounds, signed, digits)
    return f"{format_ms(value, signed, digits)} {interval}".rstrip()


def _estimate(row: dict[str, Any], q: str) -> str:
    return _with_interval(row[q], row.get(f"{q}_ci95"))


def _increment(row: dict[str, Any], q: str) -> str:
    cell = _with_interval(row[f"increment_{q}"], row.get(f"increment_{q}_ci95"), signed=True)
    return cell + (" n.s." if row.get(f"increment_{q}_significant") is False else "")


def _steady(verdicts: list[str | None]) -> str:
    """One run: its verdict; several: "3 steady", "2 steady, 1 rising"; "-" if unknown."""
    if not verdicts or all(v is None for v in verdicts):
        return "-"
    if len(verdicts) == 1:
        return verdicts[0] or "-"
    counts = Counter(v or "unknown" for v in verdicts)
    return ", ".join(f"{n} {v}" for v, n in counts.items())


# (header, left-aligned, cell of a row)
_COLUMNS = (
    ("stage", True, lambda r: r["stage"]),
    ("impl", True, lambda r: r["impl"]),
    ("p50", False, lambda r: _estimate(r, "p50")),
    ("p95", False, lambda r: format_ms(r["p95"])),
    ("p99", False, lambda r: _estimate(r, "p99")),
    ("+p50", False, lambda r: _increment(r, "p50")),
    ("+p95", False, lambda r: format_ms(r["increment_p95"], signed=True)),
    ("+p99", False, lambda r: _increment(r, "p99")),
    ("over", True, lambda r: r["increment_over"] or "-"),
    ("runs", False, lambda r: format_cell(r["repetitions"])),
    ("pace", False, lambda r: format_ms(r.get("pace_ms"))),
    ("steady", True, lambda r: _steady(r.get("steady") or [])),
)


def _body(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Headers and cells of the rows; the last column, "!N", refers to the Nth row
    with warnings (listed under the table by :func:`_warned`)."""
    headers = [h for h, _, _ in _COLUMNS] + [MARK]
    cells, warned = [], 0
    for r in rows:
        mark = ""
        if r.get("warnings"):
            warned += 1
            mark = f"{r.get('mark') or MARK}{warned}"
        cells.append([cell(r) for _, _, cell in _COLUMNS] + [mark])
    return headers, cells


def _notes(rows: list[dict[str, Any]]) -> list[list[str]]:
    """What the numbers mean, as notes of a few short phrases each: units, the
    interval methods present, increments and n.s., steadiness, the marks."""
    methods = {r.get("ci_method") for r in rows} - {None}
    explained = {
        BOOTSTRAP: "one run: moving-block bootstrap over its seconds (within-run precision only)",
        ACROSS_RUNS: "several runs: Student-t interval of the runs' mean (run-to-run variation)",
    }
    if methods:
        intervals = ["[lo–hi]: 95 % interval;", *(explained[m] for m in sorted(methods))]
    else:
        intervals = ["no intervals: the runs were evaluated before intervals were recorded"]
    return [
        ["latency in ms; p50, p95, p99: median over the runs;", *intervals],
        [
            f"+pXX: {INCREMENT_NOTE};",
            "[lo–hi] from both stages' intervals (normal approximation);",
            "n.s.: that interval contains 0, the increment is not significant at 95 %",
        ],
        ["pace: ms one core took for a fixed piece of work around the runs (lower: a faster "
         "host; -: not recorded);",
         f"steady: each run's verdict on its per-second p50 trend (-: not recorded); "
         f"{MARK}N: warning N below"],
    ]  # fmt: skip


def _warned(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """("stage/impl", its warnings) of every row with warnings, in table order."""
    return [(f"{r['stage']}/{r['impl']}", list(r["warnings"])) for r in rows if r.get("warnings")]


def format_table(comparison: Comparison) -> str:
    """A plain text table for terminals: the differences between the runs above it
    (when any), notes and the numbered warnings of its rows below."""
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, left, strict=True)
        return "  ".join(c.ljust(w) if a else c.rjust(w) for c, w, a in padded).rstrip()

    lines = []
    if comparison.differences:
        lines.append(
            "NOT COMPARABLE: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines += [f"  {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"PACE: {note}", ""]
    lines += [line(headers), "  ".join("-" * w for w in widths)]
    lines += [line(b) for b in body]
    lines += ["\n    ".join(note) for note in _notes(comparison.rows)]
    for i, (label, warnings) in enumerate(_warned(comparison.rows), 1):
        lines.append(f"{MARK}{i} {label}:")
        lines += [f"    {w}" for w in warnings]
    return "\n".join(lines)


def to_markdown(comparison: Comparison) -> str:
    """The same table in Markdown."""
    headers, body = _body(comparison.rows)
    left = [a for _, a, _ in _COLUMNS] + [True]
    lines = []
    if comparison.differences:
        lines.append(
            "**NOT COMPARABLE**: the runs differ in more than stage and implementation; "
            "increments mix these conditions:"
        )
        lines.append("")
        lines += [f"- {d}" for d in comparison.differences]
        lines.append("")
    if note := comparison.pace_note:
        lines += [f"**PACE**: {note}", ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "".join("---|" if a else "---:|" for a in left))
    lines += ["| " + " | ".join(b) + " |" for b in body]
    lines.append("")
    lines += [f"- {' '.join(note)}" for note in _notes(comparison.rows)]
    warned = _warned(comparison.rows)
    if warned:
        lines += ["", "Warnings:", ""]
        for i, (label, warnings) in enumerate(warned, 1):
            lines.append(f"{i}. {label} ({MARK}{i}):")
            lines += [f"   - {w}" for w in warnings]
    return "\n".join(lines)


def plot(comparison: Comparison, out_dir: Path, log_scale: bool = False) -> list[Path]:
    """The comparison plots: p50/p99 bars with intervals and increments, and the
    per-stage distributions side by side (from each run's latencies.parquet)."""

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = comparison.rows
    paths = [plots.increments(rows, out_dir / rundir.COMPARE_INCREMENTS, comparison.differences)]
    samples, labels = [], []
    for r in rows:
        path = Path(r["run_dir"]) / rundir.LATENCIES
        if path.exists():
            frame = pd.read_parquet(path, columns=[LATENCY, IN_RANGE])
            samples.append(frame.loc[frame[IN_RANGE], LATENCY].to_numpy())
        else:
            log.warning("%s missing: no distribution for %s", path, r["run_dir"])
            samples.append(np.zeros(0))
        labels.append(f"{r['stage']}\n({r['impl']})")
    paths.append(
        plots.distributions(labels, samples, out_dir / rundir.COMPARE_DISTRIBUTIONS, log_scale)
    )
    return paths
