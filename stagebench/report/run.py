"""report.html of a run directory: its latency (table, per-second series through the
warm-up and the measured period, the distribution), throughput, resources, warnings and
conditions, and its effective configuration. A fault or burst run shades each
disturbance window from summary.json's ``recovery`` and marks where latency recovered.
"""

from html import escape

from evaluator.text.number_format import format_exact
from ground import rundir
from stagebench.report import figures, tables
from stagebench.report.data import RunData
from stagebench.report.page import figure, section
from stagebench.resources.sampler import MACHINE


def run_page(run: RunData) -> tuple[str, list[str]]:
    s = run.summary
    meta = s.run
    title = f"Run {meta['id']}: stage {meta['stage']} ({meta['impl']})"
    origin = figures.origin_ms(s)
    trusted = s.trusted is not False
    lead = (
        f'<p class="lead"><span class="badge {"trusted" if trusted else "untrusted"}">'
        f"{'trusted' if trusted else 'NOT TRUSTED'}</span> workload {escape(meta['workload'])}, "
        f"{format_exact(meta['rate'])} msg/s, measured {format_exact(meta['duration_s'])} s; "
        f"{escape(run.dir.name)}</p>"
    )
    latency = [tables.latency_table(s)]
    if run.timeseries is not None:
        bands, marks = figures.disturbance_bands(s)
        timeline = figures.Timeline(
            figures.latency_lines(run.timeseries, origin),
            figures.period_bands(s, run.timeseries) + bands,
            marks,
        )
        latency.append(
            figure(
                figures.timeline_figure(
                    timeline,
                    "Per-second latency through the warm-up and the measured period",
                    "latency, ms (broker clock)",
                )
            )
        )
    else:
        latency.append(note(rundir.TIMESERIES, "per-second latency"))
    if run.cdf is not None:
        latency.append(figure(figures.cdf_figure([(meta["stage"], run.cdf)], s.latency_ms)))
    else:
        latency.append(note(rundir.LATENCIES, "latency distribution"))
    return title, [
        lead,
        section("Latency", *latency, tables.recovery_table(s.recovery, origin)),
        section("Throughput", *_throughput(run, origin)),
        section("Resources", *_resources(run, origin)),
        section(
            "Warnings and conditions",
            tables.warnings_list(s.warnings, not trusted),
            tables.conditions(s),
            f"<details><summary>records</summary>{tables.records_table(s.records)}</details>",
        ),
        section("Effective configuration", tables.config_tables(run.config)),
    ]


def _throughput(run: RunData, origin: int) -> list[str]:
    t = run.summary.throughput
    text = (
        f"<p>Input {format_exact(t.input_mps)} msg/s, output "
        f"{format_exact(t.output_mps)} msg/s over the measured period; peak output "
        f"{format_exact(t.peak_output_mps)} msg/s; first output "
        f"{format_exact(t.first_output_delay_ms)} ms after the first input; drained "
        f"{format_exact(t.drain_ms)} ms after the last.</p>"
    )
    if run.timeseries is None:
        return [text, note(rundir.TIMESERIES, "records per second")]
    timeline = figures.Timeline(
        figures.throughput_lines(run.timeseries, origin),
        figures.period_bands(run.summary, run.timeseries),
    )
    return [
        text,
        figure(figures.timeline_figure(timeline, "Records per broker second", "messages / s")),
    ]


def _resources(run: RunData, origin: int) -> list[str]:
    usage = run.summary.metadata.get("resources") or {}
    keys = (
        "samples",
        "cpu_percent_mean",
        "cpu_percent_max",
        "rss_mb_mean",
        "rss_mb_max",
        "heap_used_mb_mean",
        "heap_used_mb_max",
        "gc_ms_per_s_mean",
        "gc_ms_per_s_max",
        "thread_max_pct_mean",
        "thread_max_name",
    )
    rows = [
        [
            tables.cell(name),
            *(tables.num(values.get(k)) for k in keys[:-1]),
            tables.cell(values.get("thread_max_name") or "-"),
        ]
        for name, values in usage.items()
        if name != MACHINE
    ]
    parts = [tables.table(["process", *keys], rows)] if rows else []
    if run.resources is not None:
        cores = (run.summary.machine or {}).get("cores")
        parts.append(figure(figures.resources_figure(run.resources, origin, cores)))
    elif rows:
        parts.append(note(rundir.RESOURCES, "resources through time"))
    return parts or ["<p>No resources were sampled.</p>"]


def note(name: str, chart: str) -> str:
    """What stands for a chart whose file the run's directory does not hold."""
    return (
        f'<p class="note">No chart of the {escape(chart)}: this directory holds no '
        f"{escape(name)} (a run kept as reference data keeps its summary only).</p>"
    )
