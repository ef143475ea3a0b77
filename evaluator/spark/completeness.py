"""Completeness in Spark: which expected outputs came, as :mod:`evaluator.completeness` says."""

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from evaluator.completeness import MISSING_EXAMPLES, missing_section
from evaluator.spark.checks import plain
from ground import contract as s


def completeness(
    expected: DataFrame, good: DataFrame, identity: list[str], window: bool
) -> tuple[dict[str, int], dict | None]:
    """Counts of the ``expected`` outputs (``expected``, ``missing``, ``partial_windows``)
    and the missing section, from the outputs ``good`` found by identity."""
    found = good.select(*identity).distinct().withColumn("_found", F.lit(True))
    partial = F.col(s.LANES_SEEN) < F.col(s.NUM_LANES) if window else F.lit(False)
    matched = expected.join(found, identity, "left")
    row = matched.agg(
        F.count(F.lit(1)).alias("expected"),
        F.count(F.when(F.col("_found").isNull(), 1)).alias("missing"),
        F.count(F.when(partial, 1)).alias("partial_windows"),
    ).first()
    counts = {k: row[k] for k in ("expected", "missing", "partial_windows")}
    if not row["missing"]:
        return counts, None
    return counts, _missing(matched.filter(F.col("_found").isNull()), identity)


def _missing(lost: DataFrame, identity: list[str]) -> dict[str, Any] | None:
    """:func:`evaluator.completeness.missing_section` of the expected rows ``lost``, in
    the order :func:`evaluator.completeness.missing_outputs` gives them."""
    per_second = (
        lost.groupBy(F.floor(F.col(s.INPUT_TS_LATEST) / s.SECOND_MS).alias("second"))
        .count()
        .toPandas()
    )
    first = lost.orderBy(s.INPUT_TS_LATEST, *identity).limit(MISSING_EXAMPLES).collect()
    return missing_section(
        per_second.set_index("second")["count"],
        [{k: plain(row[k]) for k in (*identity, s.INPUT_TS_LATEST)} for row in first],
    )
