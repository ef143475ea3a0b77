"""Input and output throughput of a run's measured period, by broker timestamps."""

import pandas as pd

from evaluator.latencies.latency import Period
from evaluator.model.result import Throughput


def throughput(
    inputs: int,
    outputs: int,
    period: Period,
    peak_output_mps: int | None,
    first_output_delay_ms: int | None,
    drain_ms: int | None = None,
) -> Throughput:
    """summary.json's ``throughput`` (:class:`evaluator.model.result.Throughput`): ``inputs``
    and ``outputs`` are the records whose own broker timestamp lies in the measured
    period; ``drain_ms``: the last output's broker timestamp minus the last input's."""
    secs = period.seconds
    return Throughput(
        input_mps=inputs / secs if secs > 0 else None,
        output_mps=outputs / secs if secs > 0 else None,
        seconds=secs,
        peak_output_mps=peak_output_mps,
        first_output_delay_ms=first_output_delay_ms,
        drain_ms=drain_ms,
    )


def peak_output(series: pd.DataFrame) -> int | None:
    """The largest per-second output count of the time series (None without outputs)."""
    counts = series["output_count"]
    return int(counts.max()) if len(counts) and counts.max() > 0 else None
