"""Spark types of the message fields, from their logical types in :mod:`ground.contract`.

The parse stage reads the input with :func:`struct` of the input fields, and
the custom windows declare their output rows with it, so a field has the same
type wherever the engine names it, and the type the evaluator reads it as.
"""

from collections.abc import Iterable

from pyspark.sql.types import (
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ground.contract import FIELD_TYPES, FLOAT64, INT32, INT64, STRING

_SPARK_TYPES: dict[str, DataType] = {
    STRING: StringType(),
    INT32: IntegerType(),
    INT64: LongType(),
    FLOAT64: DoubleType(),
}


def struct(names: Iterable[str]) -> StructType:
    """The Spark row type of the message fields ``names``, in that order."""
    return StructType([StructField(name, _SPARK_TYPES[FIELD_TYPES[name]]) for name in names])
