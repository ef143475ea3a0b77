"""What differs between runs' settings: an engine's table among that engine's runs only,
and runs made before engines had tables compare as if they had them."""

from evaluator.comparison.differences import compared_settings, differences
from evaluator.model.result import Summary
from tests.evaluator.summaries import made_summary


def _summary(engine: str | None, **spark) -> Summary:
    """A summary as a run writes it now: the engine's table ``engine.<name>``."""
    config = {"run": {"stage": "x"}, "pipeline": {"watermark_delay_ms": 500}}
    if engine == "spark":
        config["engine.spark"] = {"master": "local[2]", "shuffle_partitions": 2, **spark}
    return made_summary(run={"rate": 400, "engine": engine}, config=config)


def _before_tables(**pipeline) -> Summary:
    """A summary of a run made when Spark's settings were ``[run]``'s and ``[pipeline]``'s."""
    return made_summary(
        run={"rate": 400},
        config={
            "run": {"stage": "x", "master": "local[2]"},
            "pipeline": {"watermark_delay_ms": 500, "master": "local[2]",
                         "shuffle_partitions": 2, **pipeline},
        },
    )  # fmt: skip


def test_an_engines_table_is_compared_key_by_key():
    assert compared_settings(_summary("spark")) == {
        "rate": 400,
        "[pipeline] watermark_delay_ms": 500,
        "[engine.spark] master": "local[2]",
        "[engine.spark] shuffle_partitions": 2,
    }


def test_a_run_made_before_engine_tables_compares_as_the_same_settings_now():
    assert compared_settings(_before_tables()) == compared_settings(_summary("spark"))
    assert differences({"old": _before_tables(), "new": _summary("spark")}) == []
    assert differences({"old": _before_tables(shuffle_partitions=4), "new": _summary("spark")}) == [
        "[engine.spark] shuffle_partitions: 4 in 1 run (old), 2 in 1 run (new)"
    ]


def test_the_floor_without_spark_settings_is_no_difference_from_spark_runs():
    runs = {"floor": _summary("floor"), "a": _summary("spark"), "b": _summary("spark")}
    assert differences(runs) == []
    runs["c"] = _summary("spark", shuffle_partitions=8)
    assert differences(runs) == ["[engine.spark] shuffle_partitions: 2 in 2 runs, 8 in 1 run (c)"]


def test_a_spark_conf_one_run_has_and_another_has_not_is_a_difference():
    runs = {"mine": _summary("spark", spark_conf={"spark.x": "1"}), "plain": _summary("spark")}
    assert differences(runs) == [
        "[engine.spark] spark_conf.spark.x: 1 in 1 run (mine), absent in 1 run (plain)"
    ]


def test_an_older_floor_runs_spark_settings_are_not_compared():
    """Runs of the floor made before engines had tables recorded Spark's settings too,
    though they ran none of them."""
    old_floor = made_summary(
        run={"rate": 400, "stage": "floor"},
        config={"run": {"stage": "floor", "master": "local[2]"},
                "pipeline": {"watermark_delay_ms": 500, "shuffle_partitions": 2}},
    )  # fmt: skip
    assert not any("engine.spark" in name for name in compared_settings(old_floor))
    cluster = _summary("spark", master="spark://h:7077")
    assert differences({"floor": old_floor, "join": cluster}) == []
