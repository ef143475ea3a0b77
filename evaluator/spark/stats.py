"""Latency statistics and the per-second series in Spark, as :mod:`evaluator.stats` gives them."""

from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from evaluator.latency import LATENCY
from evaluator.reader import TIMESTAMP
from evaluator.stats import PERCENTILES, timeseries
from ground.contract import SECOND_MS


def describe(frame: DataFrame, col: str) -> dict[str, Any]:
    """Count, mean, min, the percentiles of :data:`evaluator.stats.PERCENTILES` and max
    of ``col``, with Spark's exact ``percentile`` (numpy's linear interpolation)."""

    fractions = [q / 100 for q in PERCENTILES.values()]
    row = frame.agg(
        F.count(col).alias("count"),
        F.avg(col).alias("mean"),
        F.min(col).alias("min"),
        F.percentile(F.col(col), F.array(*[F.lit(f) for f in fractions])).alias("qs"),
        F.max(col).alias("max"),
    ).first()
    if not row["count"]:
        return {"count": 0, "mean": None, "min": None, **dict.fromkeys(PERCENTILES), "max": None}
    result = {"count": int(row["count"]), "mean": float(row["mean"]), "min": float(row["min"])}
    result.update({k: float(q) for k, q in zip(PERCENTILES, row["qs"], strict=True)})
    result["max"] = float(row["max"])
    return result


def per_second(good: DataFrame, in_ts: DataFrame | None) -> pd.DataFrame:
    """Per broker second, as :func:`evaluator.stats.timeseries`."""

    per_out = (
        good.groupBy(F.floor(F.col(TIMESTAMP) / SECOND_MS).alias("second"))
        .agg(
            F.count(F.lit(1)).alias("output_count"),
            F.percentile(LATENCY, F.lit(0.5)).alias("latency_p50_ms"),
            F.percentile(LATENCY, F.lit(0.99)).alias("latency_p99_ms"),
        )
        .toPandas()
    )
    per_in = (
        in_ts.groupBy(F.floor(F.col(TIMESTAMP) / SECOND_MS).alias("second")).count().toPandas()
        if in_ts is not None
        else pd.DataFrame({"second": [], "count": []})
    )
    frame = per_out.set_index("second").join(
        per_in.set_index("second")["count"].rename("input_count"), how="outer"
    )
    if frame.empty:
        return timeseries([], [], [])
    full = range(int(frame.index.min()), int(frame.index.max()) + 1)
    frame = frame.reindex(full)
    frame.index.name = "second"
    for col in ("input_count", "output_count"):
        frame[col] = frame[col].fillna(0).astype("int64")
    return frame.reset_index()[
        ["second", "input_count", "output_count", "latency_p50_ms", "latency_p99_ms"]
    ]
