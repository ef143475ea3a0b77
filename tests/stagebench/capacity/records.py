"""Capacity search records for the readers' tests: every key a capacity.json holds, the
ones a test leaves out at a plain value."""

from stagebench.results.capacity import CapacityResult

BASE = {
    "stage": "join", "engine": "spark", "impl": "builtin", "capacity_mps": None,
    "capacity_ci95_mps": None, "pass90_mps": None, "pass90_ci95_mps": None, "pass_curve": None,
    "sustainable_mps": None, "first_unsustainable_mps": None, "publisher_limit_mps": None,
    "precision": 0.1, "bracket_width": None, "stopped": "converged", "engine_cores_used": None,
    "sustainable_mps_per_core": None, "criteria": {"max_p50_ms": 10_000.0}, "seconds": 600.0,
    "probes": [], "machine": {"cores": 2}, "versions": {}, "dir": "results/search",
    "growth": 2.0, "probe": {},
}  # fmt: skip


def probe(rate: float, verdict: str, **more: object) -> dict:
    """A probe's keys in capacity.json with ``verdict`` (sustainable, unsustainable,
    publisher-bound)."""
    return {"rate": rate, "sustainable": verdict == "sustainable", "reasons": [],
            "publisher_bound": verdict == "publisher-bound", "p50": None, "p99": None,
            "engine_cpu_pct": None, "run_dir": None, "seconds": 60.0, **more}  # fmt: skip


def record(**doc: object) -> CapacityResult:
    """The record of a capacity.json holding ``doc``'s keys over :data:`BASE`."""
    return CapacityResult.from_doc({**BASE, **doc})
