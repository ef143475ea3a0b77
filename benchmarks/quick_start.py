"""How long README command 1 takes, and whether its p50s are the ones a long run gives.

Runs the Quick start suite (``stagebench suite --stages ingest,join,tumbling``, the
floor with it, every default) ``--suites`` times in a row and prints, per suite, its
wall-clock minutes and each stage's p50; then, per stage, how far each suite's p50 lies
from the suites' median, and (``--reference``: run directories of the same stages,
each measured in a JVM of its own after a long warm-up, e.g. ``stagebench run --stage
join --warmup 300 --duration 300``, or a suite of such runs) how far each suite's p50
lies from that run's.

Targets (issue 32): each suite under 10 minutes; the suites' p50s within ±10 % of their
median; each within ±10 % of the reference run's. The floor's p50 (0–1 ms, the broker
clock's resolution) is left out of the ratios.

    python benchmarks/quick_start.py --suites 3 --results /tmp/quick \\
        --reference results/…-ingest-… results/…-join-… results/…-tumbling-…

Needs the machine to itself: anything else running changes both the time and the p50s.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

STAGES = "ingest,join,tumbling"
TARGETS = {"minutes": 10.0, "spread": 0.10, "vs_reference": 0.10}


def run_suite(results: Path, extra: list[str]) -> tuple[float, dict[str, float], Path]:
    """One suite: its minutes, p50 per stage and directory."""
    before = set(results.glob("*-suite-*"))
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "suite", "--stages", STAGES,
         "--results", str(results), *extra],
        check=False,
    )  # fmt: skip
    minutes = (time.monotonic() - began) / 60
    if done.returncode != 0:
        raise SystemExit(f"the suite exited with {done.returncode}")
    (suite_dir,) = set(results.glob("*-suite-*")) - before
    rows = json.loads((suite_dir / "comparison.json").read_text())["stages"]
    return minutes, {r["stage"]: r["p50"] for r in rows}, suite_dir


def reference_p50(dirs: list[Path]) -> dict[str, float]:
    """p50 per stage of the reference: run directories, or a suite's directory (e.g.
    ``stagebench suite --application per-run --no-floor --stages ingest,join,tumbling
    --warmup 300 --duration 300``)."""
    found = {}
    for ref in dirs:
        if (ref / "comparison.json").exists():
            rows = json.loads((ref / "comparison.json").read_text())["stages"]
            found.update({r["stage"]: r["p50"] for r in rows})
        else:
            summary = json.loads((ref / "summary.json").read_text())
            found[summary["run"]["stage"]] = summary["latency_ms"]["p50"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=3, help="suites in a row (default 3)")
    parser.add_argument("--results", type=Path, required=True, help="results directory")
    parser.add_argument("--reference", type=Path, nargs="*", default=[],
                        help="runs measured in a JVM of their own, or their suite")  # fmt: skip
    args, extra = parser.parse_known_args()
    args.results.mkdir(parents=True, exist_ok=True)
    suites = []
    for k in range(1, args.suites + 1):
        minutes, p50, suite_dir = run_suite(args.results, extra)
        suites.append((minutes, p50))
        print(json.dumps({"suite": k, "minutes": round(minutes, 2), "p50": p50,
                          "dir": str(suite_dir)}), flush=True)  # fmt: skip
    stages = [s for s in suites[0][1] if s != "floor"]
    spread = {
        s: max(abs(p[s] / statistics.median(q[s] for _, q in suites) - 1) for _, p in suites)
        for s in stages
    }
    print(json.dumps({"spread_around_median": {s: round(v, 3) for s, v in spread.items()}}))
    reference = reference_p50(args.reference)
    versus = {
        s: max(abs(p[s] / reference[s] - 1) for _, p in suites) for s in stages if s in reference
    }
    if reference:
        off = {s: round(v, 3) for s, v in versus.items()}
        print(json.dumps({"reference_p50": reference, "most_off_reference": off}))
    met = {
        "minutes": max(m for m, _ in suites) < TARGETS["minutes"],
        "spread": max(spread.values()) <= TARGETS["spread"],
        **({"vs_reference": max(versus.values()) <= TARGETS["vs_reference"]} if versus else {}),
    }
    print(json.dumps({"targets": TARGETS, "met": met, "all_met": all(met.values())}))


if __name__ == "__main__":
    main()
