"""The files of an evaluated run.

Written into the run directory, once (an existing summary.json is never
overwritten unless asked):

- ``summary.json``: every number, the run's metadata and configuration;
- ``latencies.parquet``: one row per valid output (broker timestamp, input
  timestamps, both latencies, ``in_range`` of the measured period, identity);
- ``latencies.hlog``: the measured latencies as an HdrHistogram log (:mod:`evaluator.files.hdrlog`);
- ``timeseries.csv``: per broker second, inputs, outputs, p50/p99 latency;
- ``report.md``: the tables (and, after bursts or faults, the recovery after
  each); the plots are in report.html, which stagebench writes beside it.
"""

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.config import SETTLE_WINDOWS
from evaluator.files import hdrlog
from evaluator.recovery.section import cause_text, level_text
from evaluator.statistics.stats import STAT_KEYS
from evaluator.text.caveats import seconds_worth
from evaluator.text.number_format import format_exact
from ground import files, rundir
from ground.errors import EvaluationError

log = logging.getLogger(__name__)


def check_writable(out_dir: Path, overwrite: bool) -> None:
    """Refuse to replace an earlier evaluation's results unless ``overwrite``, and a
    directory that cannot be written (FileError), before the topics are read."""
    if (out_dir / rundir.SUMMARY).exists() and not overwrite:
        raise EvaluationError(
            f"{out_dir / rundir.SUMMARY} exists: results are never overwritten "
            "(pass --force to evaluate again, or choose another --out)"
        )
    files.writable_dir(out_dir)


def write(out_dir: Path, summary: dict[str, Any], result: dict[str, Any]) -> None:
    _write_latencies(result["latencies"], out_dir / rundir.LATENCIES)
    run = summary["run"]
    hdrlog.write(
        out_dir / rundir.LATENCY_HLOG,
        *hdrlog.measured(out_dir / rundir.LATENCIES),
        f"run {run['id']}, stage {run['stage']} ({run['impl']})",
    )
    with files.replacing(out_dir / rundir.TIMESERIES) as out:
        result["timeseries"].to_csv(out, index=False)
    files.write(out_dir / rundir.REPORT, markdown(summary))
    files.write(out_dir / rundir.SUMMARY, json.dumps(summary, indent=2, sort_keys=False) + "\n")
    log.info("wrote %s", out_dir / rundir.SUMMARY)


def _write_latencies(frame: pd.DataFrame, path: Path) -> None:
    """Column by column into Arrow (numpy columns without a copy), so a 10 M row
    frame is written without duplicating it; reader columns lose their ``_``."""

    skip = ("_malformed", "_timestamp_type")
    columns = {}
    for name in frame.columns:
        if name in skip:
            continue
        col = frame[name]
        columns[name.lstrip("_")] = (
            pa.DictionaryArray.from_pandas(col)
            if isinstance(col.dtype, pd.CategoricalDtype)
            else pa.array(col.to_numpy())
        )
    with files.replacing(path, binary=True) as out:
        pq.write_table(pa.table(columns), out)


def markdown(summary: dict[str, Any]) -> str:
    """report.md: the run, the latency ladders, completeness, throughput; its plots are
    report.html's, beside it."""
    run = summary["run"]
    lines = [
        f"# Run {run['id']}: stage {run['stage']} ({run['impl']})",
        "",
        f"Workload {run['workload']}, rate {run['rate']} msg/s, duration {run['duration_s']} s, "
        f"output topic `{run['output_topic']}`, inputs {', '.join(run['input_topics']) or '-'}.",
        "",
    ]
    if summary["trusted"] is False:
        lines += [
            "**Not trusted:** the outputs contradict their inputs (see Warnings and "
            "Wrong fields); the latencies below are computed from the input topics.",
            "",
        ]
    intended = summary.get("latency_intended")
    columns = [summary["latency_ms"], summary["latency_earliest_ms"]]
    header = "| statistic | latest input | earliest input |"
    if intended:
        columns += [intended["latency_ms"], intended["send_delay_ms"]]
        header += " latest input's intended send time | inputs' send delay |"
    lines += ["## Latency (ms, broker clock)", "", header, "|---" + "|---:" * len(columns) + "|"]
    for key in STAT_KEYS:
        lines.append(f"| {key} | " + " | ".join(format_exact(c[key]) for c in columns) + " |")
    lines += ["", f"Percentiles: {summary['evaluation']['percentile_method']}.", ""]
    if intended:
        lines += [
            "The intended send time is the publisher's schedule; the send delay is an "
            "input's append − that time"
            + (
                ", read on two hosts' clocks (approximate)."
                if intended["same_clock"] is False
                else "."
            ),
            "",
        ]
    lines += _records(summary["records"])
    period = summary["period"]
    thr = summary["throughput"]
    lines += [
        "",
        "## Throughput",
        "",
        f"Input {format_exact(thr['input_mps'])} msg/s, output "
        f"{format_exact(thr['output_mps'])} msg/s over the "
        f"measured period of {format_exact(thr['seconds'])} s (warm-up {period['warmup_ms']} ms, "
        f"end cut {period['end_cut_ms']} ms), each record by its own broker timestamp. "
        f"Peak output {format_exact(thr.get('peak_output_mps'))} msg/s (busiest broker second); "
        f"first output {format_exact(thr.get('first_output_delay_ms'))} ms after the first input.",
        "",
    ]
    lines += _conditions(summary)
    if summary.get("recovery"):
        lines += _recovery(summary["recovery"], period["measured_from_ms"])
    if summary.get("missing"):
        lines += _missing(summary["missing"])
    if summary["wrong"]:
        lines += _wrong(summary["wrong"])
    if summary["warnings"]:
        lines += ["## Warnings", ""] + [f"- {w}" for w in summary["warnings"]] + [""]
    page = rundir.REPORT_HTML
    lines += ["## Plots", "", f"In [{page}]({page}), beside this file.", ""]
    return "\n".join(lines)


def _records(records: dict[str, Any]) -> list[str]:
    """The records' counts, and the malformed inputs by kind where there are any."""
    lines = ["## Records", "", "| count | value |", "|---|---:|"]
    by_kind = records.get("malformed_inputs_by_kind")
    counts = {k: v for k, v in records.items() if k != "malformed_inputs_by_kind"}
    lines += [f"| {k} | {format_exact(v)} |" for k, v in counts.items()]
    if by_kind and any(by_kind.values()):
        lines += ["", "Malformed inputs by kind (counted and dropped by the pipeline):", ""]
        lines += ["| kind | inputs |", "|---|---:|"]
        lines += [f"| {kind} | {n} |" for kind, n in by_kind.items()]
    return lines


def _wrong(wrong_fields: dict[str, Any]) -> list[str]:
    """The fields that disagree with the inputs, each with its first example."""
    lines = ["## Wrong fields", "", "| field | outputs | example (output vs expected) |"]
    lines += ["|---|---:|---|"]
    for name, wrong in wrong_fields.items():
        ex = wrong["examples"][0]
        ident = ", ".join(f"{k}={v}" for k, v in ex.items() if k not in ("output", "expected"))
        lines.append(f"| {name} | {wrong['count']} | {ident}: {ex['output']} vs {ex['expected']} |")
    return [*lines, ""]


def _conditions(summary: dict[str, Any]) -> list[str]:
    """What the figures were measured under: warm-up, steadiness, precision, the machine."""
    lines = ["## Conditions", ""]
    if warmup := summary.get("warmup"):
        settled = {True: ", settled", False: ", not settled"}.get(warmup.get("settled"), "")
        lines.append(
            f"- warm-up: {warmup.get('mode')}, {format_exact(warmup.get('seconds'))} s{settled}"
        )
    if steady := summary.get("steady_state"):
        lo, hi = steady["ci95"]
        lines.append(
            f"- measured period: {steady['verdict']}, per-second p50 trend "
            f"{steady['slope_ms_per_min']:+,.1f} ms/min (95 % interval {lo:+,.1f} to "
            f"{hi:+,.1f}) over {seconds_worth(steady)}"
        )
    confidence = summary.get("confidence") or {}
    for q in ("p50", "p99"):
        if bounds := confidence.get(q):
            low, high = (format_exact(b) for b in bounds)
            lines.append(f"- {q} 95 % interval: {low}–{high} ms ({confidence.get('method')})")
    read = summary["evaluation"]
    if read.get("from_ms") is not None:
        before = summary["period"]["measured_from_ms"] - read["from_ms"]
        lines.append(
            f"- read: the topics from {before / 1000:g} s before the measured period on "
            f"(lead-in and warm-up unread); {read['outputs_of_unread_inputs']} outputs of "
            "earlier inputs left out"
        )
    if machine := summary.get("machine"):
        busy, saturated = machine.get("cpu_total_pct_mean"), _pct(machine.get("saturated_share"))
        lines.append(
            f"- machine: {machine.get('cores')} cores, busy {format_exact(busy)} % of a core "
            "on average, "
            f"saturated in {format_exact(saturated)} % of the seconds; other processes "
            f"{format_exact(machine.get('cpu_outside_run_pct_mean'))} %, steal "
            f"{format_exact(machine.get('steal_pct_mean'))} % of a core"
        )
        if broker := machine.get("broker"):
            lines.append(f"- broker: {_broker(broker)}")
        if pace := machine.get("pace"):
            lines.append(
                f"- pace: {format_exact(pace.get('before_ms'))} ms before the run, "
                f"{format_exact(pace.get('after_ms'))} ms after ({pace.get('work')})"
            )
    if lateness := summary.get("input_lateness"):
        lines.append(f"- input lateness: {_lateness(lateness)}")
    if updates := summary.get("updates"):
        lines.append(f"- updates: {_updates(updates)}")
    if closing := summary.get("window_closing"):
        lines.append(f"- window closing: {closing_text(closing)}")
    return [*lines, ""] if len(lines) > 2 else []


def closing_text(section: dict[str, Any]) -> str:
    """A built-in window's latency split at the input that let it close."""
    wait, engine = section["wait_ms"], section["engine_ms"]
    clock = "every input topic" if section["event_clock"] == "least" else "either input topic"
    return (
        f"of each window's latency, p50 {format_exact(wait.get('p50'))} ms (p99 "
        f"{format_exact(wait.get('p99'))}) waited for the input that let it close (the "
        f"first after which {clock} had passed its end plus "
        f"{format_exact(section['watermark_delay_ms'])} ms) and p50 "
        f"{format_exact(engine.get('p50'))} ms (p99 {format_exact(engine.get('p99'))}) was "
        f"the engine's after it; {section['windows']:,} windows"
        + (f", {section['never_closed']:,} never closed" if section["never_closed"] else "")
    )


def _updates(section: dict[str, Any]) -> str:
    """A stage written at every update: its windows' first updates and how many it took."""
    first, per_window = section["first_update_ms"], section["per_window"]
    return (
        f"{section['complete']:,} of {section['windows']:,} windows complete "
        f"({section['never_complete']:,} never); the latency above is each window's "
        f"complete update; its first update p50 {format_exact(first.get('p50'))} ms, p99 "
        f"{format_exact(first.get('p99'))} ms (from the latest input it carries); "
        f"{format_exact(per_window.get('mean'))} updates per window on average, at most "
        f"{format_exact(per_window.get('max'))}"
    )


def _lateness(section: dict[str, Any]) -> str:
    """How late the inputs came in event time, against the watermark delay."""
    text = (
        f"{section['late']:,} of {section['inputs']:,} inputs behind the newest observation "
        f"time already appended; p99 {format_exact(section['p99_ms'])} ms, max "
        f"{format_exact(section['max_ms'])} ms of event time"
    )
    if section.get("at_or_past_delay") is not None:
        text += (
            f"; {section['at_or_past_delay']:,} at or past the watermark delay "
            f"({format_exact(section['watermark_delay_ms'])} ms)"
        )
    if within := section.get("within_topic"):
        text += "; behind the newest of its own topic at most " + ", ".join(
            f"{format_exact(t['max_ms'])} ms ({topic})" for topic, t in within.items()
        )
    if (dropped := section.get("dropped_by_watermark")) is not None:
        text += f"; Spark dropped {sum(dropped.values()):,} rows as later than the watermark"
    return text


def _broker(broker: dict[str, Any]) -> str:
    """Where the broker ran and what it used: sampled here, or not seen from here."""
    if broker.get("kind") == "remote":
        return "not on this machine (not sampled)"
    where = (
        "embedded"
        if broker["kind"] == "embedded"
        else (f"container {', '.join(broker['containers'])} ({', '.join(broker['images'])})")
    )
    return (
        f"{where}, {format_exact(broker.get('cpu_percent_mean'))} % of a core on average, "
        f"at most {format_exact(broker.get('rss_mb_max'))} MB resident"
    )


def _pct(share: float | None) -> float | None:
    return None if share is None else round(share * 100, 1)


def _missing(missing: dict[str, Any]) -> list[str]:
    """Where the missing outputs' inputs were appended, and the first of them."""
    lines = [
        "## Missing outputs",
        "",
        f"{missing['count']} expected outputs never arrived. Their inputs were appended in "
        f"these broker seconds (epoch s; {missing['spans_total']} stretch(es), the first "
        f"{len(missing['spans'])} shown):",
        "",
        "| from | to | missing |",
        "|---:|---:|---:|",
        *(f"| {a} | {b} | {n} |" for a, b, n in missing["spans"]),
        "",
        "The first of them:",
        "",
        *(f"- {', '.join(f'{k}={v}' for k, v in ex.items())}" for ex in missing["examples"]),
        "",
    ]
    return lines


def _recovery(recovery: dict[str, Any], measured_from_ms: int) -> list[str]:
    """The recovery after each disturbance window, one row per window."""
    lines = [
        "## Recovery after each disturbance",
        "",
        f"Recovered: per-second p50 back within {recovery['threshold']:.0%} of its median over "
        f"the {recovery['baseline_window_s']:g} s before the window, for {recovery['hold_s']} s; "
        "times from the window's end to the start of a second of the per-second series "
        "(broker clock), so to within a second. Settled: the first second from which, to the "
        f"end of the search, the medians of {recovery.get('settle_windows', SETTLE_WINDOWS)} "
        f"windows agree within {recovery['threshold']:.0%}, at the level shown (95 % "
        "interval) and its offset from the p50 before; for a level not shown to be new, the "
        "time is the recovery's.",
        "",
        "| kind | starts (s into the measured period) | length (s) | baseline p50 (ms) "
        "| peak p50 (ms) | first output after (s) | recovery (s) | recovered | settled (s) "
        "| settled at | the process before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|",
    ]
    for w in recovery["windows"]:
        cells = [
            w["kind"],
            (w["start_ms"] - measured_from_ms) / 1000,
            (w["end_ms"] - w["start_ms"]) / 1000,
            w["baseline_p50_ms"],
            w["peak_ms"],
            w["first_output_after_s"],
            w["recovery_s"],
            {True: "yes", False: "no", None: "no baseline"}[w["recovered"]],
            w.get("settled_s"),
            level_text(w),
            cause_text(w) or "-",
        ]
        lines.append("| " + " | ".join(format_exact(c) for c in cells) + " |")
    return [*lines, ""]
