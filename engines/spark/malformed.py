"""Input validity (:mod:`ground.malformed`) as one Spark expression.

The parse stage (:func:`engines.spark.transforms.parse`) drops every input it finds
invalid with :func:`valid_input`. It is built from the same tables as
:func:`ground.malformed.problems` (fields, their types, ranges), so it agrees with
the pure-Python definition the publisher and the evaluator use.
"""

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ground.contract import FIELD_TYPES, FLOW, INPUT_FIELDS, KINDS, REQUIRED_FIELDS, SPEED, STRING
from ground.malformed import MAX_INPUT_BYTES, RANGES


def valid_input(value: Column, field: Callable[[str], Column]) -> Column:
    """Whether an input is valid as :mod:`ground.malformed` defines it (never null).

    ``value`` is the input value as text; ``field(name)`` is the input's field
    ``name`` as parsed with a schema of the field types, null where the field is
    absent, null or of another JSON type. Such a parse alone would take too much:
    it ignores unknown fields, may read a number or an object as text for a
    string field, and reads invalid UTF-8 inside a string as U+FFFD; the checks
    on ``value`` itself refuse those.
    """
    keys = F.json_object_keys(value)
    known = F.array(*(F.lit(name) for name in INPUT_FIELDS))
    valid = (
        keys.isNotNull()
        & (F.size(F.array_except(keys, known)) == 0)
        & (F.octet_length(value) <= MAX_INPUT_BYTES)
        & F.is_valid_utf8(value)
        & (field(SPEED).isNull() != field(FLOW).isNull())
    )
    for name in REQUIRED_FIELDS:
        valid &= field(name).isNotNull()
    for name in INPUT_FIELDS:
        if FIELD_TYPES[name] == STRING:
            valid &= value.rlike(f'"{name}"\\s*:\\s*"') & (F.length(field(name)) > 0)
    for name, (low, high) in RANGES.items():
        # NaN sorts above every number in Spark, so it is out of every range
        in_range = field(name).between(low, high)
        valid &= in_range if name not in KINDS else F.coalesce(in_range, F.lit(True))
    return F.coalesce(valid, F.lit(False))
