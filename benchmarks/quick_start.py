"""How long README command 1 takes, and whether its p50s are the ones a long run gives.

Runs the Quick start suite (``stagebench suite --stages ingest,join,tumbling``, the
floor with it, every default) ``--suites`` times in a row and prints, per suite, its
wall-clock minutes and each stage's p50; then, per stage, how far each suite's p50 lies
from the suites' median, and (``--reference``: run directories of the same stages,
each measured in a JVM of its own after a long warm-up, e.g. ``stagebench run --stage
join --warmup 300 --duration 300``, or a suite of such runs) how far each suite's p50
lies from that run's.

Targets: each suite under 10 minutes; the suites' p50s within ±10 % of their
median; each within ±10 % of the reference run's. The floor's p50 (0–1 ms, the broker
clock's resolution) is left out of the ratios.

    python benchmarks/quick_start.py --suites 3 --results /tmp/quick \\
        --reference results/…-ingest-… results/…-join-… results/…-tumbling-…

The host's own speed drifts by several per cent over an hour, as much as the effect
being checked. ``--interleave STAGES`` measures the reference itself, in turns: those
stages in JVMs of their own (``--reference-warmup``, default 300 s, then
``--reference-duration``, default 300 s) before the first suite and after each one, and
holds each suite's p50 against the mean of the two references around it:

    python benchmarks/quick_start.py --suites 3 --results /tmp/quick --interleave ingest

Any other argument goes to each suite (``stagebench suite``), not to the references.

Needs the machine to itself: anything else running changes both the time and the p50s.
"""

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

STAGES = "ingest,join,tumbling"
TARGETS = {"minutes": 10.0, "spread": 0.10, "vs_reference": 0.10}


def stagebench_suite(results: Path, arguments: list[str]) -> Path:
    """Run ``stagebench suite`` with these arguments; the directory it wrote."""
    before = set(results.glob("*-suite-*"))
    done = subprocess.run(
        [sys.executable, "-m", "stagebench", "suite", "--results", str(results), *arguments],
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"stagebench suite {' '.join(arguments)} exited with {done.returncode}")
    (suite_dir,) = set(results.glob("*-suite-*")) - before
    return suite_dir


def run_suite(results: Path, extra: list[str]) -> tuple[float, dict[str, float], Path]:
    """One suite: its minutes, p50 per stage and directory."""
    began = time.monotonic()
    suite_dir = stagebench_suite(results, ["--stages", STAGES, *extra])
    minutes = (time.monotonic() - began) / 60
    return minutes, reference_p50([suite_dir]), suite_dir


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


def run_reference(results: Path, stages: str, warmup: int, duration: int) -> dict[str, float]:
    """The stages in JVMs of their own after a long warm-up: p50 per stage."""
    suite_dir = stagebench_suite(
        results,
        ["--stages", stages, "--no-floor", "--application", "per-run",
         "--warmup", str(warmup), "--duration", str(duration)],
    )  # fmt: skip
    return reference_p50([suite_dir])


def parser() -> argparse.ArgumentParser:
    """The benchmark's options; the rest are the suites' own."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=3, help="suites in a row (default 3)")
    parser.add_argument("--results", type=Path, required=True, help="results directory")
    parser.add_argument("--reference", type=Path, nargs="*", default=[],
                        help="runs measured in a JVM of their own, or their suite")  # fmt: skip
    parser.add_argument(
        "--interleave",
        metavar="STAGES",
        default="",
        help="measure these stages in JVMs of their own before the first "
        "suite and after each one, e.g. ingest or ingest,join,tumbling",
    )
    parser.add_argument(
        "--reference-warmup",
        type=int,
        default=300,
        metavar="S",
        help="the interleaved references' warm-up, seconds (default 300)",
    )
    parser.add_argument(
        "--reference-duration",
        type=int,
        default=300,
        metavar="S",
        help="the interleaved references' measured seconds (default 300)",
    )
    return parser


def main() -> None:
    options = parser()
    args, extra = options.parse_known_args()
    if args.interleave and args.reference:
        options.error("--reference and --interleave exclude each other")
    args.results.mkdir(parents=True, exist_ok=True)
    references_dir = args.results / "references"

    def reference() -> dict[str, float]:
        references_dir.mkdir(exist_ok=True)
        p50 = run_reference(references_dir, args.interleave, args.reference_warmup,
                            args.reference_duration)  # fmt: skip
        print(json.dumps({"reference": len(around), "p50": p50}), flush=True)
        return p50

    around: list[dict[str, float]] = []
    if args.interleave:
        around.append(reference())
    suites = []
    for k in range(1, args.suites + 1):
        minutes, p50, suite_dir = run_suite(args.results, extra)
        suites.append((minutes, p50))
        print(json.dumps({"suite": k, "minutes": round(minutes, 2), "p50": p50,
                          "dir": str(suite_dir)}), flush=True)  # fmt: skip
        if args.interleave:
            around.append(reference())
    stages = [s for s in suites[0][1] if s != "floor"]
    spread = {
        s: max(abs(p[s] / statistics.median(q[s] for _, q in suites) - 1) for _, p in suites)
        for s in stages
    }
    print(json.dumps({"spread_around_median": {s: round(v, 3) for s, v in spread.items()}}))
    if around:
        # each suite against the mean of the references measured just before and after it
        refs = [{s: (a[s] + b[s]) / 2 for s in a} for a, b in itertools.pairwise(around)]
    else:
        reference = reference_p50(args.reference)
        refs = [reference] * len(suites)
        if reference:
            print(json.dumps({"reference_p50": reference}))
    offs = [
        {s: p[s] / r[s] - 1 for s in stages if s in r}
        for (_, p), r in zip(suites, refs, strict=True)
    ]
    if around:
        for k, (r, off) in enumerate(zip(refs, offs, strict=True), start=1):
            rounded = {s: round(v, 3) for s, v in off.items()}
            print(json.dumps({"suite": k, "reference_around_p50": r, "off_reference": rounded}))
    versus = {s: max(abs(off[s]) for off in offs) for s in offs[0]}
    if versus:
        print(json.dumps({"most_off_reference": {s: round(v, 3) for s, v in versus.items()}}))
    met = {
        "minutes": max(m for m, _ in suites) < TARGETS["minutes"],
        # rounded: 33 ms against 30 is +10 % exactly, 0.10000000000000009 in floating point
        "spread": round(max(spread.values()), 9) <= TARGETS["spread"],
        **(
            {"vs_reference": round(max(versus.values()), 9) <= TARGETS["vs_reference"]}
            if versus
            else {}
        ),
    }
    print(json.dumps({"targets": TARGETS, "met": met, "all_met": all(met.values())}))


if __name__ == "__main__":
    main()
