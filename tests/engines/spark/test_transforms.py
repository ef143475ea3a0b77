"""Each pipeline stage's transform on static DataFrames (Spark local, no Kafka); the custom
sliding window, which needs a watermark, in a stream of files."""

import json
import math
import os

import pytest

from ground.contract import (
    ACCURACY,
    FLOW,
    FLOW_CHANGE_LONG,
    FLOW_CHANGE_SHORT,
    FLOW_SUM,
    INPUT_COUNT,
    INPUT_TS_EARLIEST,
    INPUT_TS_LATEST,
    KIND,
    LANE,
    LANES_SEEN,
    LATITUDE,
    LOCATION_ID,
    LONGITUDE,
    NUM_LANES,
    OBSERVATION_TS,
    RECORD,
    RUN_ID,
    SCHEDULED_TS,
    SEQ,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    SOURCE_TOPIC,
    SPEED,
    SPEED_AVG,
    SPEED_CHANGE_LONG,
    SPEED_CHANGE_SHORT,
    WINDOW_END,
    WINDOW_START,
)
from ground.malformed import validate_input

pytestmark = pytest.mark.spark

T0 = 1_763_867_400_000
"""A whole second, epoch ms."""


def message(kind: str, location: str, lane: int, second: int, value: float, lanes: int) -> dict:
    """A valid input message (schema.py contract) of ``kind`` for second ``second`` after T0."""
    msg = {
        LOCATION_ID: location,
        LANE: lane,
        OBSERVATION_TS: T0 + second * 1000,
        kind: value,
        LATITUDE: 52.123456,
        LONGITUDE: 5.123456,
        NUM_LANES: lanes,
        ACCURACY: 95.0,
        SEQ: second,
        SCHEDULED_TS: T0 + second * 1000 + 7,
    }
    assert validate_input(msg) == []
    return msg


def raw_frame(spark, rows: list[tuple[str, int, int, int, str]]):
    """A DataFrame shaped like the Kafka source from (topic, partition, offset, ts_ms, value)."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(rows, "topic string, partition int, offset long, ts long, v string")
    return df.select(
        "topic",
        "partition",
        "offset",
        F.timestamp_millis("ts").alias("timestamp"),
        F.col("v").cast("binary").alias("value"),
    )


def scenario() -> list[tuple[str, int, int, int, str]]:
    """Locations A (2 lanes) and B (3 lanes) over 4 seconds; B's lane 3 misses second 2."""
    rows, offset = [], 0
    for second in range(4):
        for location, lanes in (("A", 2), ("B", 3)):
            for lane in range(1, lanes + 1):
                if (location, second, lane) == ("B", 2, 3):
                    continue
                for kind in (SPEED, FLOW):
                    value = 80.0 + 3 * lane - second if kind == SPEED else 10.0 * lane + second
                    broker_ts = T0 + second * 1000 + 40 + offset
                    msg = json.dumps(message(kind, location, lane, second, value, lanes))
                    rows.append((kind, 0, offset, broker_ts, msg))
                    offset += 1
    return rows


def expected_tumbling(rows) -> dict[tuple[str, int], dict]:
    """Reference tumbling results computed in plain Python from the raw rows."""
    out: dict[tuple[str, int], dict] = {}
    for _, _, _, ts, value in rows:
        m = json.loads(value)
        r = out.setdefault(
            (m[LOCATION_ID], m[OBSERVATION_TS]),
            {FLOW_SUM: 0.0, "speeds": [], "lanes": set(), "ts": []},
        )
        r["lanes"].add(m[LANE])
        r["ts"].append(ts)
        if FLOW in m:
            r[FLOW_SUM] += m[FLOW]
        else:
            r["speeds"].append(m[SPEED])
    return {
        key: {
            FLOW_SUM: r[FLOW_SUM],
            SPEED_AVG: sum(r["speeds"]) / len(r["speeds"]),
            LANES_SEEN: len(r["lanes"]),
            INPUT_TS_LATEST: max(r["ts"]),
            INPUT_TS_EARLIEST: min(r["ts"]),
            INPUT_COUNT: len(r["ts"]),
        }
        for key, r in out.items()
    }


def by_key(df, *key: str) -> dict[tuple, dict]:
    return {tuple(r[k] for k in key): r.asDict() for r in df.collect()}


def assert_rows_equal(actual: dict[tuple, dict], expected: dict[tuple, dict]) -> None:
    assert actual.keys() == expected.keys()
    for key, row in expected.items():
        for name, value in row.items():
            got = actual[key][name]
            if isinstance(value, float) and got is not None:
                assert math.isclose(got, value, rel_tol=1e-9), (key, name, got, value)
            else:
                assert got == value, (key, name, got, value)


def test_ingest_carries_identity_broker_time_and_unchanged_value(spark):
    from engines.spark.sink import output_value
    from engines.spark.transforms import ingest

    value = '{"location_id": "X",  "odd spacing": [1, 2]}'
    out = ingest(raw_frame(spark, [("flow", 3, 42, T0 + 5, value)])).collect()
    assert len(out) == 1
    row = out[0]
    assert (row[SOURCE_TOPIC], row[SOURCE_PARTITION], row[SOURCE_OFFSET]) == ("flow", 3, 42)
    assert row[INPUT_TS_LATEST] == row[INPUT_TS_EARLIEST] == T0 + 5
    assert row[INPUT_COUNT] == 1
    assert row[RECORD] == value

    written = output_value(ingest(raw_frame(spark, [("flow", 3, 42, T0 + 5, value)])), "r1")
    text = written.collect()[0]["value"]
    assert text.endswith(f'"{RECORD}":{value}}}')  # embedded byte for byte
    decoded = json.loads(text)
    assert decoded[RUN_ID] == "r1"
    assert decoded[RECORD] == json.loads(value)
    assert decoded[INPUT_TS_LATEST] == T0 + 5


def test_parse_types_good_records_and_counts_malformed(spark):
    from pyspark.sql import Observation

    from engines.spark.transforms import ingest, parse

    good_speed = message(SPEED, "A", 1, 0, 87.5, 2)
    good_flow = message(FLOW, "A", 1, 0, 12, 2)
    no_lane = {k: v for k, v in good_speed.items() if k != LANE}
    lane_text = {**good_speed, LANE: "one"}
    both = {**good_speed, FLOW: 3}
    neither = {k: v for k, v in good_flow.items() if k != FLOW}
    values = [good_speed, good_flow, no_lane, lane_text, both, neither]
    rows = [(SPEED, 0, i, T0 + i, json.dumps(v)) for i, v in enumerate(values)]
    rows.append((FLOW, 0, 99, T0, "{not json"))

    observation = Observation("parse-test")
    out = parse(ingest(raw_frame(spark, rows)), observation).orderBy(SOURCE_OFFSET).collect()

    assert [r[SOURCE_OFFSET] for r in out] == [0, 1]
    speed_row, flow_row = out
    assert speed_row[KIND] == SPEED and speed_row[SPEED] == 87.5 and speed_row[FLOW] is None
    assert flow_row[KIND] == FLOW and flow_row[FLOW] == 12.0 and flow_row[SPEED] is None
    assert speed_row[LANE] == 1 and speed_row[OBSERVATION_TS] == T0
    assert speed_row[NUM_LANES] == 2 and speed_row[INPUT_COUNT] == 1
    assert speed_row[INPUT_TS_LATEST] == speed_row[INPUT_TS_EARLIEST] == T0
    assert observation.get == {"records": 7, "malformed": 5}


def test_parse_drops_every_kind_of_malformed_input_and_only_those(spark):
    """The parse stage and ground.malformed agree on the faulty-event workload's inputs."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from engines.spark.transforms import ingest, parse
    from ground import malformed as m
    from publisher.faulty import malformed

    good = [message(SPEED, "A", 1, 0, 87.5, 2), message(FLOW, "A", 1, 0, 12, 2)]
    values = [json.dumps(v).encode() for v in good]
    values += [malformed(kind, v, good[v % 2]) for v in range(6) for kind in m.KINDS]
    rows = [(SPEED, 0, i, T0 + i, bytearray(v)) for i, v in enumerate(values)]
    df = spark.createDataFrame(rows, "topic string, partition int, offset long, ts long, v binary")
    raw = df.select("topic", "partition", "offset", F.timestamp_millis("ts").alias("timestamp"),
                    F.col("v").alias("value"))  # fmt: skip

    observation = Observation("malformed-test")
    out = parse(ingest(raw), observation).orderBy(SOURCE_OFFSET).collect()

    assert [r[SOURCE_OFFSET] for r in out] == [0, 1]
    assert observation.get == {"records": len(values), "malformed": len(values) - 2}


def test_join_matches_only_same_location_lane_and_time(spark):
    from engines.spark.transforms import ingest, join, parse

    rows = [
        (SPEED, 0, 0, T0 + 100, json.dumps(message(SPEED, "A", 1, 0, 90.0, 2))),
        (FLOW, 0, 0, T0 + 120, json.dumps(message(FLOW, "A", 1, 0, 7, 2))),
        # near misses: other lane, other second, other location
        (SPEED, 0, 1, T0 + 130, json.dumps(message(SPEED, "A", 2, 0, 91.0, 2))),
        (FLOW, 0, 1, T0 + 140, json.dumps(message(FLOW, "A", 1, 1, 8, 2))),
        (FLOW, 0, 2, T0 + 150, json.dumps(message(FLOW, "B", 2, 0, 9, 2))),
    ]
    out = join(parse(ingest(raw_frame(spark, rows))), watermark_delay_ms=1000).collect()
    assert len(out) == 1
    row = out[0]
    assert (row[LOCATION_ID], row[LANE], row[OBSERVATION_TS]) == ("A", 1, T0)
    assert (row[SPEED], row[FLOW], row[SEQ]) == (90.0, 7.0, 0)
    assert row[INPUT_TS_LATEST] == T0 + 120
    assert row[INPUT_TS_EARLIEST] == T0 + 100
    assert row[INPUT_COUNT] == 2


def _joined(spark):
    from engines.spark.transforms import ingest, join, parse

    return join(parse(ingest(raw_frame(spark, scenario()))), watermark_delay_ms=1000)


def test_tumbling_aggregates_lanes_per_location_second(spark):
    from engines.spark.transforms import tumbling

    actual = by_key(tumbling(_joined(spark)), LOCATION_ID, WINDOW_START)
    expected = {
        (loc, ts): {**row, WINDOW_END: ts + 1000}
        for (loc, ts), row in expected_tumbling(scenario()).items()
    }
    assert_rows_equal(actual, expected)
    assert actual[("B", T0 + 2000)][LANES_SEEN] == 2  # the missing lane
    assert actual[("B", T0 + 2000)][NUM_LANES] == 3


def test_tumbling_union_equals_tumbling_without_the_join(spark):
    """On a batch every window is whole at once: the union's aggregation gives the
    tumbling window's outputs, speed and flow of every lane counted, the join skipped."""
    from engines.spark.transforms import ingest, parse, tumbling, tumbling_union

    parsed = parse(ingest(raw_frame(spark, scenario())))
    union = by_key(tumbling_union(parsed, 1000), LOCATION_ID, WINDOW_START)
    joined = by_key(tumbling(_joined(spark)), LOCATION_ID, WINDOW_START)
    assert_rows_equal(union, {key: {k: v for k, v in row.items() if k != "_event_time"}
                              for key, row in joined.items()})  # fmt: skip
    assert union[("B", T0 + 2000)][INPUT_COUNT] == 4  # two of three lanes, both kinds


def test_custom_tumbling_matches_builtin_on_complete_seconds(spark):
    from engines.spark import custom, transforms

    joined = _joined(spark)
    builtin = by_key(transforms.tumbling(joined).drop("_event_time"), LOCATION_ID, WINDOW_START)
    mine = by_key(custom.tumbling(joined), LOCATION_ID, WINDOW_START)
    # a static DataFrame has no watermark, so only complete seconds are emitted (no timer)
    complete = {k: v for k, v in builtin.items() if v[LANES_SEEN] == v[NUM_LANES]}
    assert len(complete) == len(builtin) - 1
    assert_rows_equal(mine, complete)


SEQUENCE = {0: 10.0, 1: 20.0, 3: 30.0, 4: 0.0, 5: 15.0}
"""Flow per second of one location: second 2 is missing, second 4 is zero."""


_SECOND_SCHEMA = (
    f"{LOCATION_ID} string, {WINDOW_START} long, {FLOW_SUM} double, {SPEED_AVG} double, "
    f"{INPUT_TS_LATEST} long, {INPUT_TS_EARLIEST} long, {INPUT_COUNT} long"
)


def _second(location: str, s: int, flow: float) -> tuple:
    """A tumbling result of second ``s`` after T0 (columns of :data:`_SECOND_SCHEMA`)."""
    return (location, T0 + s * 1000, flow, 2 * flow + 1, T0 + s * 1000 + 90, T0 + s * 1000 + 10, 4)


def _tumbled(spark):
    from pyspark.sql import functions as F

    rows = [_second("X", s, flow) for s, flow in SEQUENCE.items()]
    df = spark.createDataFrame(rows, _SECOND_SCHEMA)
    return df.withColumn("_event_time", F.timestamp_millis(F.col(WINDOW_START) + 999))


def _expected_sliding() -> dict[tuple, dict]:
    def change(now, then):
        return None if then is None or then == 0 else (now - then) / then

    expected = {}
    for s, flow in SEQUENCE.items():
        present = [p for p in SEQUENCE if s - 2 <= p <= s]
        short, long = SEQUENCE.get(s - 1), SEQUENCE.get(s - 2)
        speed = 2 * flow + 1
        expected[("X", T0 + (s - 2) * 1000)] = {
            WINDOW_END: T0 + (s + 1) * 1000,
            FLOW_SUM: flow,
            SPEED_AVG: speed,
            FLOW_CHANGE_SHORT: change(flow, short),
            FLOW_CHANGE_LONG: change(flow, long),
            SPEED_CHANGE_SHORT: change(speed, None if short is None else 2 * short + 1),
            SPEED_CHANGE_LONG: change(speed, None if long is None else 2 * long + 1),
            INPUT_TS_LATEST: T0 + s * 1000 + 90,
            INPUT_TS_EARLIEST: T0 + min(present) * 1000 + 10,
            INPUT_COUNT: 4 * len(present),
        }
    return expected


def test_sliding_relative_changes_with_missing_and_zero_seconds(spark):
    from engines.spark.transforms import sliding

    actual = by_key(sliding(_tumbled(spark), 3000, 1000, 1000, 2000), LOCATION_ID, WINDOW_START)
    expected = _expected_sliding()
    assert_rows_equal(actual, expected)
    # spelled out for the known sequence
    assert actual[("X", T0 - 1000)][FLOW_CHANGE_SHORT] == 1.0  # 10 -> 20
    assert actual[("X", T0 + 1000)][FLOW_CHANGE_SHORT] is None  # second 2 missing
    assert actual[("X", T0 + 1000)][FLOW_CHANGE_LONG] == 0.5  # 20 -> 30
    assert actual[("X", T0 + 3000)][FLOW_CHANGE_SHORT] is None  # from zero


LATE = {0: 8.0, 1: 4.0, 2: 6.0, 3: 6.0, 4: 9.0}
"""Flow per second of location Y, whose second 1 is partial: it comes late."""
ARRIVALS = [
    [("X", 0), ("Y", 0)],
    [("X", 1), ("Y", 2)],
    [("X", 3), ("Y", 1), ("Y", 3)],
    [("Y", 4)],
    [("X", 4), ("X", 5)],
]
"""The tumbling results of each micro-batch, in the order the custom tumbling stage
emits them: a complete second at once, a partial one (Y's second 1) in the first
batch whose watermark passes its end, after Y's seconds 2 and 3. X's second 2 never
comes, so X's windows 3 and 4 wait for the watermark to pass it: window 3 in a
batch without data for X (its timer)."""


def test_custom_sliding_matches_builtin_whatever_order_seconds_arrive(spark, tmp_path):
    from pyspark.sql import functions as F

    from engines.spark import custom, transforms

    flows = {"X": SEQUENCE, "Y": LATE}
    source = tmp_path / "tumbled"
    source.mkdir()
    for batch, seconds in enumerate(ARRIVALS):
        lines = [(*_second(loc, s, flows[loc][s]), T0 + s * 1000 + 999) for loc, s in seconds]
        path = source / f"batch-{batch}.csv"
        path.write_text("".join(",".join(map(str, line)) + "\n" for line in lines))
        os.utime(path, (1_000_000 + batch, 1_000_000 + batch))  # the file source's order
    # each file one micro-batch, whose watermark is the latest event time of those before
    stream = (
        spark.readStream.schema(f"{_SECOND_SCHEMA}, _event_ms long")
        .option("maxFilesPerTrigger", 1)
        .csv(str(source))
        .withColumn("_event_time", F.timestamp_millis("_event_ms"))
        .withWatermark("_event_time", "0 seconds")
        .drop("_event_ms", "_event_time")  # as the custom tumbling's output: no event-time column
    )
    emitted: list[tuple[int, dict]] = []
    query = (
        custom.sliding(stream, 3000, 1000, 1000, 2000)
        .writeStream.foreachBatch(
            lambda df, batch: emitted.extend((batch, r.asDict()) for r in df.collect())
        )
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()

    batch_of = {(r[LOCATION_ID], (r[WINDOW_END] - T0) // 1000 - 1): b for b, r in emitted}
    assert batch_of == {
        **{("X", s): b for s, b in {0: 1, 1: 1, 3: 3, 4: 4, 5: 4}.items()},
        **{("Y", s): b for s, b in {0: 1, 1: 2, 2: 2, 3: 2, 4: 3}.items()},
    }  # (location, last second) -> micro-batch: Y's 2 waits for its late second 1
    everything = [
        _second(loc, s, flow) for loc, seconds in flows.items() for s, flow in seconds.items()
    ]
    tumbled = spark.createDataFrame(everything, _SECOND_SCHEMA).withColumn(
        "_event_time", F.timestamp_millis(F.col(WINDOW_START) + 999)
    )
    builtin = by_key(transforms.sliding(tumbled, 3000, 1000, 1000, 2000), LOCATION_ID, WINDOW_START)
    mine = {(r[LOCATION_ID], r[WINDOW_START]): r for _, r in emitted}
    assert len(mine) == len(emitted), "a window emitted twice"
    assert len(builtin) == len(SEQUENCE) + len(LATE)
    assert_rows_equal(mine, builtin)
    assert mine[("Y", T0 - 1000)][INPUT_COUNT] == 2 * 4  # the window the late second ends
    assert mine[("Y", T0)][INPUT_COUNT] == 3 * 4  # and one that came before it
