"""How long each engine's latency takes to settle from a cold JVM: the evidence for its
shortest warm-up (``warmup_min_s``, docs/method.md#warm-up).

Runs ``stagebench run --warmup 0 --duration D`` per engine (a job of its own, a cold
JVM), so every second from the job's first output is measured, then reads the run's
per-second p50 (timeseries.csv) and prints, per engine, one JSON line::

    {"engine": …, "stage": …, "rate": …, "seconds": …, "final_p50_ms": …,
     "settled_after_s": …, "last_step_s": …}

``final_p50_ms`` is the median per-second p50 of the last ``--final`` seconds;
``settled_after_s`` the first second after which every ``--window``-second median stays
within ``steady_tolerance`` (10 %, at least 1 ms) of that level, counted from the first
output: the shortest warm-up that leaves nothing of the JIT's steps in the measured
period; ``last_step_s`` the last second whose window median was outside it (null: none).
Needs the engines installed (a first run installs them) and a quiet machine.

    python benchmarks/warmup_settle.py [--engines spark,flink,kafka-streams] [--stage join]
                                       [--rate 400] [--duration 420] [--window 30]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.config import STEADY_TOLERANCE
from evaluator.statistics.steady import RESOLUTION_MS


def settled_after(p50: pd.Series, window: int, final: int) -> dict[str, float | None]:
    """The settle figures of a per-second p50 series indexed by seconds from the first."""
    level = float(np.median(p50.iloc[-final:]))
    allowed = max(STEADY_TOLERANCE * level, RESOLUTION_MS)
    medians = p50.rolling(window, min_periods=window // 2).median()
    off = medians[(medians - level).abs() > allowed]
    # a window ending at second t covers t - window + 1 … t: settled from its start
    last = None if off.empty else float(off.index[-1])
    return {
        "final_p50_ms": round(level, 1),
        "settled_after_s": 0.0 if last is None else round(last + 1, 1),
        "last_step_s": last,
    }


def measure(engine: str, stage: str, rate: float, duration: float, out: Path) -> Path:
    command = [sys.executable, "-m", "stagebench", "run", "--engine", engine, "--stage", stage,
               "--rate", f"{rate:g}", "--warmup", "0", "--duration", f"{duration:g}",
               "--results", str(out)]  # fmt: skip
    subprocess.run(command, check=True)
    runs = sorted(p for p in out.iterdir() if (p / "timeseries.csv").is_file())
    return runs[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default="spark,flink,kafka-streams")
    parser.add_argument("--stage", default="join")
    parser.add_argument("--rate", type=float, default=400.0)
    parser.add_argument("--duration", type=float, default=420.0)
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--final", type=int, default=60)
    parser.add_argument("--keep", type=Path, help="keep the runs here (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for engine in args.engines.split(","):
            run = measure(engine, args.stage, args.rate, args.duration, out)
            series = pd.read_csv(run / "timeseries.csv")
            series = series[series["output_count"] > 0]
            p50 = pd.Series(
                series["latency_p50_ms"].to_numpy(),
                index=series["second"].to_numpy() - series["second"].iloc[0],
            )
            figures = settled_after(p50, args.window, args.final)
            print(json.dumps({"engine": engine, "stage": args.stage, "rate": args.rate,
                              "seconds": int(p50.index[-1]) + 1, **figures,
                              "run": run.name}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
