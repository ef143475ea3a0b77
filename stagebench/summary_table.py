"""A short terminal table of evaluated runs: latency and completeness."""

from typing import Any

from evaluator.compare import format_cell

COLUMNS = [
    ("stage", lambda s: s["run"]["stage"]),
    ("impl", lambda s: s["run"]["impl"]),
    ("outputs", lambda s: s["records"]["outputs"]),
    ("missing", lambda s: s["records"]["missing"]),
    ("dup", lambda s: s["records"]["duplicates"]),
    ("p50 ms", lambda s: s["latency_ms"]["p50"]),
    ("p95 ms", lambda s: s["latency_ms"]["p95"]),
    ("p99 ms", lambda s: s["latency_ms"]["p99"]),
    ("max ms", lambda s: s["latency_ms"]["max"]),
]


def format_runs(summaries: list[dict[str, Any]]) -> str:
    header = [name for name, _ in COLUMNS]
    body = [[format_cell(get(s)) for _, get in COLUMNS] for s in summaries]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in body]
    warnings = [w for s in summaries for w in s.get("warnings", [])]
    lines += [f"WARNING: {w}" for w in warnings]
    return "\n".join(lines)
