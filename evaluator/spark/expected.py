"""What each stage's outputs should be, computed by Spark from the input topics.

The rows and columns of :func:`evaluator.expected.expected_outputs`, stage by
stage, from the inputs that :func:`evaluator.spark.reader.valid_inputs` parsed.
"""

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from evaluator.expected import CHANGES
from evaluator.reader import OFFSET, PARTITION, TIMESTAMP, TOPIC
from evaluator.spark.reader import VALID, VALUE, valid_inputs
from ground import contract as s
from ground import malformed as m
from ground.contract import SECOND_MS
from ground.errors import EvaluationError
from ground.stages import stage

_KEY = [s.LOCATION_ID, s.LANE, s.OBSERVATION_TS]
"""What a join output is the output of: one location, lane and minute."""


def expected_outputs(
    name: str, inputs: DataFrame, window_s: int, lookbacks_s: tuple[int, int]
) -> DataFrame:
    """:func:`evaluator.expected.expected_outputs` in Spark: the same rows and columns."""

    if not stage(name).stateful:
        return _records(inputs, stage(name).raw)
    joined = _joined(inputs.filter(F.col(VALID)))
    if name == "join":
        return joined
    tumbling = _tumbling(joined)
    if name == "tumbling":
        return tumbling
    if name == "sliding":
        return _sliding(tumbling, window_s, lookbacks_s)
    raise EvaluationError(f"the Spark evaluation engine does not evaluate stage {name!r}")


def _records(inputs: DataFrame, raw: bool) -> DataFrame:
    """One output per (valid, unless ``raw``) input record."""
    rows = inputs if raw else inputs.filter(F.col(VALID))
    values = [] if raw else [F.col(k).cast("double").alias(k) for k in s.KINDS]
    return rows.select(
        F.col(TOPIC).alias(s.SOURCE_TOPIC),
        F.col(PARTITION).cast("bigint").alias(s.SOURCE_PARTITION),
        F.col(OFFSET).alias(s.SOURCE_OFFSET),
        F.col(TIMESTAMP).alias(s.INPUT_TS_LATEST),
        F.col(TIMESTAMP).alias(s.INPUT_TS_EARLIEST),
        F.lit(1).cast("bigint").alias(s.INPUT_COUNT),
        *values,
    )


def _side(valid: DataFrame, kind: str, tag: str) -> DataFrame:
    """The ``kind`` inputs, the first record of a key winning (as pandas'
    ``drop_duplicates(keep="first")``)."""
    rows = valid.filter(F.col(kind).isNotNull())
    first = Window.partitionBy(*_KEY).orderBy(TOPIC, PARTITION, OFFSET)
    rows = rows.withColumn("_n", F.row_number().over(first)).filter(F.col("_n") == 1)
    return rows.select(
        *_KEY,
        F.col(TIMESTAMP).alias(f"_ts_{tag}"),
        F.col(s.NUM_LANES).alias(f"_nl_{tag}"),
        F.col(kind).cast("double").alias(kind),
    )


def _joined(valid: DataFrame) -> DataFrame:
    return (
        _side(valid, s.SPEED, "s")
        .join(_side(valid, s.FLOW, "f"), _KEY, "inner")
        .select(
            *_KEY,
            s.SPEED,
            s.FLOW,
            F.greatest("_ts_s", "_ts_f").alias(s.INPUT_TS_LATEST),
            F.least("_ts_s", "_ts_f").alias(s.INPUT_TS_EARLIEST),
            F.lit(2).cast("bigint").alias(s.INPUT_COUNT),
            F.greatest("_nl_s", "_nl_f").alias(s.NUM_LANES),
        )
    )


def _tumbling(joined: DataFrame) -> DataFrame:
    return (
        joined.withColumn(s.WINDOW_START, F.floor(F.col(s.OBSERVATION_TS) / SECOND_MS) * SECOND_MS)
        .groupBy(s.LOCATION_ID, s.WINDOW_START)
        .agg(
            F.max(s.INPUT_TS_LATEST).alias(s.INPUT_TS_LATEST),
            F.min(s.INPUT_TS_EARLIEST).alias(s.INPUT_TS_EARLIEST),
            F.sum(s.INPUT_COUNT).alias(s.INPUT_COUNT),
            F.countDistinct(s.LANE).alias(s.LANES_SEEN),
            F.max(s.NUM_LANES).alias(s.NUM_LANES),
            F.sum(s.FLOW).alias(s.FLOW_SUM),
            F.avg(s.SPEED).alias(s.SPEED_AVG),
        )
        .withColumn(s.WINDOW_START, F.col(s.WINDOW_START).cast("bigint"))
        .withColumn(s.WINDOW_END, F.col(s.WINDOW_START) + SECOND_MS)
    )


def _sliding(tumbling: DataFrame, window_s: int, lookbacks_s: tuple[int, int]) -> DataFrame:
    shifted = tumbling.select(
        s.LOCATION_ID,
        F.explode(F.sequence(F.lit(0), F.lit(window_s - 1))).alias("_k"),
        s.WINDOW_START,
        s.INPUT_TS_LATEST,
        s.INPUT_TS_EARLIEST,
        s.INPUT_COUNT,
    ).withColumn("_last", F.col(s.WINDOW_START) + F.col("_k") * SECOND_MS)
    agg = shifted.groupBy(s.LOCATION_ID, "_last").agg(
        F.max(s.INPUT_TS_LATEST).alias(s.INPUT_TS_LATEST),
        F.min(s.INPUT_TS_EARLIEST).alias(s.INPUT_TS_EARLIEST),
        F.sum(s.INPUT_COUNT).alias(s.INPUT_COUNT),
    )
    key = [s.LOCATION_ID, "_last"]
    values = (s.FLOW_SUM, s.SPEED_AVG)
    last = tumbling.select(
        s.LOCATION_ID,
        F.col(s.WINDOW_START).alias("_last"),
        s.LANES_SEEN,
        s.NUM_LANES,
        *values,
    )
    out = last.join(agg, key, "inner")
    changes = []
    for back_s, which in zip(lookbacks_s, (0, 1), strict=True):
        # the tumbling second back_s seconds before the window's last one
        then = tumbling.select(
            s.LOCATION_ID,
            (F.col(s.WINDOW_START) + back_s * SECOND_MS).alias("_last"),
            *[F.col(v).alias(f"_then{which}_{v}") for v in values],
        )
        out = out.join(then, key, "left")
        for value, names in CHANGES.items():
            before = F.col(f"_then{which}_{value}")
            # (now − then) / then; null (NaN in pandas) without that second or when it is 0
            change = F.when(before != 0, F.try_divide(F.col(value) - before, before))
            changes.append(change.alias(names[which]))
    return out.select(
        s.LOCATION_ID,
        (F.col("_last") + SECOND_MS - window_s * SECOND_MS).alias(s.WINDOW_START),
        (F.col("_last") + SECOND_MS).alias(s.WINDOW_END),
        s.INPUT_TS_LATEST,
        s.INPUT_TS_EARLIEST,
        s.INPUT_COUNT,
        s.LANES_SEEN,
        s.NUM_LANES,
        *values,
        *changes,
    )


def malformed_by_kind(raw: DataFrame) -> dict[str, int]:
    """Malformed inputs per kind of :data:`ground.malformed.KINDS`: the invalid ones'
    raw bytes classified by :func:`ground.malformed.classify`, as the pandas engine
    does (a second pass over the input topics, made only when some are malformed)."""

    kind = F.udf(lambda value: m.classify(value), "string")  # no type hints to infer from
    bad = valid_inputs(raw, keep_value=True).filter(~F.col(VALID))
    rows = bad.groupBy(kind(F.col(VALUE).cast("binary")).alias("kind")).count().collect()
    found = {row["kind"]: row["count"] for row in rows}
    return {k: found.get(k, 0) for k in m.KINDS}
