"""Results directories of a made-up history: one join run a day, each a summary.json and
config.json of the shape a real run writes, with the p50, the commit and the engine
version the test chooses, so the site and ``history --steps`` read them as they read a
real history."""

import copy
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from ground import rundir
from tests.stagebench.results_dirs import latencies, summary

FIRST = datetime(2026, 11, 1, 12, tzinfo=UTC)
WOBBLE = (1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.04, 0.96, 1.0)
"""How the made-up runs wander around their level."""


@cache
def _template() -> dict[str, Any]:
    return summary("join", "00000000", latencies("join", False, 0), False)


def make_history(
    results: Path, p50s: list[float], commits: list[str], pyspark: list[str] | None = None
) -> list[Path]:
    """A run a day under ``results``, oldest first: the i-th with p50 ``p50s[i]`` (p99
    twice that, intervals ±3 % and ±10 %), commit ``commits[i]`` and PySpark
    ``pyspark[i]`` (default 4.3.0)."""
    made = []
    for i, (p50, commit) in enumerate(zip(p50s, commits, strict=True)):
        run_id = f"{i:08x}"
        doc = copy.deepcopy(_template())
        doc["run"]["id"] = run_id
        doc["latency_ms"] |= {"p50": p50, "p99": 2 * p50}
        doc["confidence"] |= {"p50": [p50 * 0.97, p50 * 1.03], "p99": [p50 * 1.8, p50 * 2.2]}
        version = pyspark[i] if pyspark else "4.3.0"
        doc["versions"] |= {"stagebench_commit": commit, "pyspark": version}
        when = FIRST + timedelta(days=i)
        run_dir = results / f"{when:%Y%m%dT%H%M%SZ}-join-{run_id}"
        run_dir.mkdir(parents=True)
        (run_dir / rundir.CONFIG).write_text(json.dumps(doc["config"]))
        (run_dir / rundir.SUMMARY).write_text(json.dumps(doc))
        made.append(run_dir)
    return made


STEP_AT = 12
"""The first run of the higher level in :func:`stepped`."""


def stepped(results: Path, points: int = 20) -> list[Path]:
    """A join history with a 40 % step at run :data:`STEP_AT`, where the commit changes
    from c011 to c012 and PySpark from 4.3.0 to 4.4.0; the runs around it wander by a few
    per cent."""
    p50s = [200.0 * WOBBLE[i % 10] * (1.4 if i >= STEP_AT else 1.0) for i in range(points)]
    commits = [f"c{i:03d}" for i in range(points)]
    pyspark = ["4.3.0" if i < STEP_AT else "4.4.0" for i in range(points)]
    return make_history(results, p50s, commits, pyspark)


def flat(results: Path, points: int = 20) -> list[Path]:
    """A join history that only wanders by a few per cent."""
    p50s = [200.0 * WOBBLE[i % 10] for i in range(points)]
    return make_history(results, p50s, [f"c{i:03d}" for i in range(points)])
