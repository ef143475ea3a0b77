"""Each output checked against its expected output, in Spark, as :mod:`evaluator.checks` does.

An output is joined by its identity to the output its inputs imply; the
expected fields ride along as ``_want_<field>`` columns, which
latencies.parquet leaves out.
"""

import math
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from evaluator import checks
from evaluator.latency import EXPLAINED
from evaluator.reader import OFFSET, PARTITION

WANT = "_want_"
"""Prefix of an expected output's columns joined to its output."""


def explained(good: DataFrame, expected: DataFrame, identity: list[str], checked: list[str]):
    """``good`` with :data:`EXPLAINED` and, per ``checked`` field, the value of the
    expected output of the same identity (``_want_<field>``; null when unexpected)."""

    twin = expected.select(
        *identity,
        F.lit(True).alias(EXPLAINED),
        *[F.col(c).alias(WANT + c) for c in checked],
    )
    return good.join(twin, identity, "left").select(
        *good.columns,
        F.coalesce(F.col(EXPLAINED), F.lit(False)).alias(EXPLAINED),
        *[WANT + c for c in checked],
    )


def derived(field: str) -> Column:
    """The expected ``field`` of an explained output, its own otherwise (:func:`checks.derived`)."""

    return F.when(F.col(EXPLAINED), F.col(WANT + field)).otherwise(F.col(field))


def wrong(field: str, exact: bool) -> Column:
    """Whether an explained output's ``field`` differs from the expected, as
    :func:`evaluator.checks.check` decides (never null)."""

    got, want = F.col(field), F.col(WANT + field)
    if exact:
        return ~got.eqNullSafe(want)
    got, want = got.cast("double"), want.cast("double")
    missing_got = got.isNull() | F.isnan(got)
    missing_want = want.isNull() | F.isnan(want)
    # numpy's isclose: |a − b| <= atol + rtol·|b| (equal infinities are close)
    close = (got == want) | (F.abs(got - want) <= F.lit(checks.RTOL) + checks.RTOL * F.abs(want))
    return (missing_got != missing_want) | (~missing_got & ~missing_want & ~close)


def examples(measured: DataFrame, flag: Column, field: str, identity: list[str]) -> list[dict]:
    """The first :data:`checks.EXAMPLES` outputs where ``flag``, by partition and offset
    (the pandas reader's order within a partition)."""

    rows = (
        measured.filter(flag)
        .orderBy(PARTITION, OFFSET)
        .select(*identity, field, WANT + field)
        .limit(checks.EXAMPLES)
        .collect()
    )
    return [
        {
            **{k: plain(row[k]) for k in identity},
            "output": plain(row[field]),
            "expected": plain(row[WANT + field]),
        }
        for row in rows
    ]


def plain(value: Any) -> Any:
    """A JSON-friendly scalar (NaN as None, as :mod:`evaluator.checks` reports it)."""
    return None if isinstance(value, float) and math.isnan(value) else value
