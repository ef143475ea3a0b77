"""The Spark engine's expected outputs equal the pandas engine's, stage by stage."""

import pandas as pd
import pytest

from evaluator.expected import expected_outputs
from evaluator.reader import MALFORMED, TIMESTAMP_TYPE
from evaluator.spark import expected as spark_expected
from ground import contract as s
from ground.stages import stage as stage_table
from tests.evaluator.test_expected import ROWS, valued

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("stage", ["ingest", "parse", "join", "tumbling", "sliding"])
def test_expected_outputs_match_pandas(spark, stage):
    frame = valued(ROWS)
    want = expected_outputs(stage, frame, sliding_window_s=3, lookbacks_s=(1, 2))
    rows = frame.drop(columns=[MALFORMED, TIMESTAMP_TYPE]).assign(
        _valid=~frame[MALFORMED],
        **{c: frame[c].astype(str) for c in ("_topic", s.LOCATION_ID)},
    )
    # a missing measurement is null in Spark (NaN in pandas), as from_json reads it
    rows = rows.astype(object).where(rows.notna(), None)
    got = spark_expected.expected_outputs(stage, spark.createDataFrame(rows), 3, (1, 2)).toPandas()
    assert set(got.columns) == set(want.columns)
    key = list(stage_table(stage).identity)
    want = want.astype({c: str for c in key if want[c].dtype.name == "category"})
    got = got[list(want.columns)].astype(want.dtypes.to_dict())
    pd.testing.assert_frame_equal(
        got.sort_values(key).reset_index(drop=True),
        want.sort_values(key).reset_index(drop=True),
        check_exact=False,
        rtol=1e-12,
    )
