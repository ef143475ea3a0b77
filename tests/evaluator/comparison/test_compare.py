import json

import pytest

from evaluator.comparison.compare import Comparison, compare
from evaluator.comparison.differences import differences
from evaluator.comparison.table import format_table, to_markdown
from evaluator.statistics.significance import paired_t
from evaluator.text.number_format import format_ms
from ground.errors import EvaluationError
from tests.evaluator.summaries import made_summary, summary_doc

NOTHING_MORE = {"warnings": [], "confidence": None, "steady_state": None, "machine": None}
"""The sections a test's summary has empty: no warnings, intervals, verdict or pace."""


def _run(tmp_path, name, stage, impl, p50, p95, p99, run=None, **sections):
    """A run directory with a made-up summary.json (:func:`summary_doc`); ``run`` adds
    keys to its run section, ``sections`` replaces sections (warnings, confidence,
    config, …)."""
    run_dir = tmp_path / name
    run_dir.mkdir()
    summary = summary_doc(
        **{**NOTHING_MORE, **sections},
        run={"stage": stage, "impl": impl, **(run or {})},
        latency_ms={"p50": p50, "p95": p95, "p99": p99},
    )
    (run_dir / "summary.json").write_text(json.dumps(summary))
    return run_dir


def test_rows_follow_the_stage_ladder_with_increments(tmp_path):
    dirs = [
        _run(tmp_path, "c", "join", "builtin", 600.0, 900.0, 1400.0),
        _run(tmp_path, "a", "ingest", "builtin", 100.0, 150.0, 200.0),
        _run(tmp_path, "b", "parse", "builtin", 150.0, 210.0, 300.0),
    ]
    rows = compare(dirs).rows
    assert [r.stage for r in rows] == ["ingest", "parse", "join"]
    assert rows[0].increment_p50 is None
    assert (rows[1].increment_p50, rows[1].increment_p95, rows[1].increment_p99) == (
        50.0,
        60.0,
        100.0,
    )
    assert rows[2].increment_p99 == 1100.0
    assert rows[2].run_dir == str(dirs[0])


def test_repetitions_and_impls_are_grouped_with_increments_over_the_right_row(tmp_path):
    dirs = [
        _run(tmp_path, "i1", "ingest", "builtin", 10.0, 20.0, 30.0),
        _run(tmp_path, "i2", "ingest", "builtin", 14.0, 26.0, 90.0),
        _run(tmp_path, "i3", "ingest", "builtin", 12.0, 20.0, 30.0),
        _run(tmp_path, "j", "join", "builtin", 500.0, 800.0, 1000.0),
        _run(tmp_path, "tb", "tumbling", "builtin", 2500.0, 3000.0, 4000.0),
        _run(tmp_path, "tc", "tumbling", "custom", 1200.0, 1500.0, 2000.0),
        _run(tmp_path, "sb", "sliding", "builtin", 3500.0, 4500.0, 6000.0),
        _run(tmp_path, "sc", "sliding", "custom", 1700.0, 2000.0, 3000.0),
    ]
    comparison = compare(dirs)
    rows = comparison.rows
    by = {(r.stage, r.impl): r for r in rows}
    assert [(r.stage, r.impl) for r in rows] == [
        ("ingest", "builtin"), ("join", "builtin"), ("tumbling", "builtin"),
        ("tumbling", "custom"), ("sliding", "builtin"), ("sliding", "custom"),
    ]  # fmt: skip
    ingest = by[("ingest", "builtin")]
    # the mean of the runs, the value their Student-t interval is centred on
    assert (ingest.p50, ingest.p95, ingest.p99) == (12.0, 22.0, 50.0)
    assert ingest.p50_spread == [10.0, 14.0] and ingest.p99_spread == [30.0, 90.0]
    assert ingest.repetitions == 3 and len(ingest.run_dirs) == 3
    assert ingest.run_dir in ingest.run_dirs
    assert ingest.increment_p50 is None and ingest.increment_over is None
    # join over the median ingest
    assert by[("join", "builtin")].increment_p50 == 488.0
    # custom tumbling has no custom join: over the built-in join
    assert by[("tumbling", "custom")].increment_p50 == 700.0
    assert by[("tumbling", "custom")].increment_over == "join/builtin"
    assert by[("tumbling", "builtin")].increment_p50 == 2000.0
    # each sliding over the tumbling of its own implementation
    assert by[("sliding", "builtin")].increment_p99 == 2000.0
    assert by[("sliding", "custom")].increment_p50 == 500.0
    assert by[("sliding", "custom")].increment_over == "tumbling/custom"
    text = format_table(comparison, wide=True)
    assert "tumbling/custom" in text and "runs" in text.splitlines()[0]


def test_foreign_summary_is_an_evaluation_error_naming_the_file(tmp_path):
    latency = {"p50": 1, "p95": 1, "p99": 1}
    ingest = summary_doc(**NOTHING_MORE, run={"stage": "ingest", "impl": "builtin"})
    for name, doc in (
        ("unversioned", {k: v for k, v in ingest.items() if k != "schema_version"}),
        ("whole", {k: v for k, v in ingest.items() if k != "latency_ms"}),
        ("latency", {**ingest, "latency_ms": {"p50": 1}}),
        ("stage", {**ingest, "run": {"stage": "window", "impl": "builtin"}}),
        ("text", {**ingest, "latency_ms": {**latency, "p50": "x"}}),
        ("warnings", {**ingest, "warnings": None}),
        ("list", [1, 2]),
        ("ci", {**ingest, "confidence": {"p50": "x", "p99": [1, 2]}}),
        ("verdict", {**ingest, "steady_state": {"verdict": "wobbly"}}),
    ):
        run_dir = tmp_path / name
        run_dir.mkdir()
        (run_dir / "summary.json").write_text(json.dumps(doc))
        with pytest.raises(EvaluationError, match=str(run_dir / "summary.json")):
            compare([run_dir])


def test_tables_label_increments(tmp_path):
    comparison = compare([_run(tmp_path, "a", "ingest", "builtin", 1.0, 2.0, 3.0)])
    text = format_table(comparison, wide=True)
    assert "difference of percentiles" in text
    assert text.splitlines()[0].split()[:3] == ["stage", "impl", "p50"]
    md = to_markdown(comparison)
    assert md.splitlines()[2].startswith("| ingest | builtin | 1.0 |")


def test_unevaluated_run_is_an_error(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(EvaluationError, match="evaluate the run first"):
        compare([tmp_path / "x"])


def _ci(p50, p99):
    return {"method": "moving-block bootstrap over seconds", "block_s": 5, "n_boot": 1000,
            "p50": list(p50), "p99": list(p99)}  # fmt: skip


def _steady(verdict):
    return {"slope_ms_per_min": 0.0, "ci95": [-1.0, 1.0], "mk_p": 0.5, "seconds": 54,
            "verdict": verdict}  # fmt: skip


def _config(run_id, **pipeline):
    """A config section as a run writes it: per-run keys (topics, ids, directories,
    sources) unique to ``run_id``, the rest shared unless ``pipeline`` overrides."""
    return {
        "run": {"stage": "x", "impl": "builtin", "rate": 400.0, "workload": "latency",
                "duration_s": 60.0, "master": "local[2]", "results_dir": f"/r/{run_id}",
                "bootstrap": None, "warmup_s": None},
        "publisher": {"seed": 42, "rate": 400.0, "speed_topic": f"stagebench-{run_id}-speed",
                      "flow_topic": f"stagebench-{run_id}-flow"},
        "pipeline": {"stage": "x", "run_id": run_id, "output_topic": f"stagebench-{run_id}-out",
                     "checkpoint_dir": f"/r/{run_id}/checkpoint", "watermark_delay_ms": 1000,
                     "spark_conf": {"spark.a": "1"}, **pipeline},
        "evaluator": {"warmup_s": None, "end_cut_s": 0.0, "plots": run_id == "a"},
        "sources": {"run": {"rate": "command line" if run_id == "a" else "default"}},
    }  # fmt: skip


def test_rows_carry_their_runs_warnings_deduplicated_and_marked(tmp_path):
    i1 = _run(tmp_path, "i1", "ingest", "builtin", 10.0, 20.0, 30.0,
              warnings=["3 negative latencies", "3 negative latencies"])  # fmt: skip
    i2 = _run(tmp_path, "i2", "ingest", "builtin", 12.0, 22.0, 32.0,
              warnings=["publisher behind schedule"])  # fmt: skip
    p = _run(tmp_path, "p", "parse", "builtin", 15.0, 25.0, 35.0, warnings=[])
    comparison = compare([i1, i2, p])
    ingest, parse = comparison.rows
    assert ingest.warnings == [f"{i1}: 3 negative latencies", f"{i2}: publisher behind schedule"]
    assert (ingest.mark, parse.mark, parse.warnings) == ("!", "", [])
    lines = format_table(comparison, wide=True).splitlines()
    assert lines[2].startswith("ingest") and lines[2].endswith("!1")
    assert lines[3].startswith("parse") and not lines[3].rstrip().endswith("!1")
    listed = lines[lines.index("!1 ingest/builtin:") :]
    assert listed[1:3] == [
        f"    {i1}: 3 negative latencies",
        f"    {i2}: publisher behind schedule",
    ]
    md = to_markdown(comparison)
    assert md.splitlines()[2].endswith("| !1 |")
    assert "1. ingest/builtin (!1):" in md and f"   - {i2}: publisher behind schedule" in md


def test_runs_differing_only_in_per_run_keys_are_comparable(tmp_path):
    dirs = [
        _run(tmp_path, name, stage, "builtin", 10.0, 20.0, 30.0, config=_config(name),
             run={"id": name, "rate": 400, "workload": "latency", "duration_s": 60,
                  "bootstrap": "127.0.0.1:9092", "output_topic": f"stagebench-{name}-out"})
        for name, stage in (("a", "ingest"), ("b", "parse"))
    ]  # fmt: skip
    assert compare(dirs).differences == []


def test_mixed_runs_are_refused_naming_each_difference(tmp_path):
    common = {"workload": "latency", "duration_s": 60, "bootstrap": "127.0.0.1:9092"}
    dirs = [
        _run(tmp_path, "a", "ingest", "builtin", 10.0, 20.0, 30.0, config=_config("a"),
             run={"rate": 400, **common}),
        _run(tmp_path, "b", "parse", "builtin", 11.0, 21.0, 31.0, config=_config("b"),
             run={"rate": 400.0, **common}),
        _run(tmp_path, "c", "join", "builtin", 400.0, 500.0, 600.0, config=_config("c"),
             run={"rate": 400, **common}),
        _run(tmp_path, "d", "tumbling", "builtin", 3000.0, 3500.0, 4000.0,
             config=_config("d", watermark_delay_ms=500, spark_conf={"spark.a": "2"}),
             run={"rate": 800, **common}),
    ]  # fmt: skip
    expected = [
        "rate: 400 in 3 runs, 800 in 1 run (d)",
        "[pipeline] watermark_delay_ms: 1000 in 3 runs, 500 in 1 run (d)",
        "[engine.spark] spark_conf.spark.a: 1 in 3 runs, 2 in 1 run (d)",
    ]
    with pytest.raises(EvaluationError) as err:
        compare(dirs)
    assert all(line in str(err.value) for line in expected)
    assert "--allow-mixed" in str(err.value)
    comparison = compare(dirs, allow_mixed=True)
    assert comparison.differences == expected
    assert [r.stage for r in comparison.rows] == ["ingest", "parse", "join", "tumbling"]
    text = format_table(comparison, wide=True)
    assert text.splitlines()[0].startswith("NOT COMPARABLE")
    assert text.splitlines()[1:4] == [f"  {line}" for line in expected]
    assert to_markdown(comparison).startswith("**NOT COMPARABLE**")
    assert "NOT COMPARABLE" not in format_table(compare(dirs[:3]), wide=True)


def test_differences_name_every_run_on_a_tie_and_count_absent_values():
    summaries = {
        "results/x": made_summary(run={"stage": "ingest", "bootstrap": "kafka-a:9092"},
                                  config={}),
        "results/y": made_summary(run={"stage": "parse", "bootstrap": "kafka-b:9092"},
                                  config={"evaluator": {"end_cut_s": 2}}),
    }  # fmt: skip
    assert differences(summaries) == [
        "bootstrap: kafka-a:9092 in 1 run (x), kafka-b:9092 in 1 run (y)",
        "[evaluator] end_cut_s: absent in 1 run (x), 2 in 1 run (y)",
    ]
    assert differences({"results/x": summaries["results/x"]}) == []


def test_runs_named_an_engine_compare_with_runs_before_engines_were_named():
    """The engine is a row's, as its stage and implementation are: a run of `--engine
    spark` compares with a default run and with one whose config has no engine."""
    summaries = {
        "results/x": made_summary(run={"stage": "floor"}, config={
            "run": {"engine": "spark"}, "pipeline": {"engine": "spark"}}),
        "results/y": made_summary(run={"stage": "ingest"}, config={"run": {"engine": ""}}),
        "results/z": made_summary(run={"stage": "join"}, config={"run": {}}),
    }  # fmt: skip
    assert differences(summaries) == []


def test_one_run_keeps_its_own_interval(tmp_path):
    ci = _ci((431.0, 466.0), (700.0, 820.0))
    run_dir = _run(tmp_path, "a", "join", "builtin", 448.0, 600.0, 764.0,
                   confidence=ci, steady_state=_steady("steady"))  # fmt: skip
    comparison = compare([run_dir])
    (row,) = comparison.rows
    assert (row.p50_ci95, row.p99_ci95) == ([431.0, 466.0], [700.0, 820.0])
    assert row.ci_method == "within-run" and row.steady == ["steady"]
    text = format_table(comparison, wide=True)
    assert "448 [431–466]" in text and "764 [700–820]" in text
    assert "batch means" in text and "Student-t" not in text
    assert text.splitlines()[2].split()[-1] == "steady"


def test_repetitions_take_the_interval_across_runs(tmp_path):
    from scipy import stats

    dirs = [
        _run(tmp_path, f"i{i}", "ingest", "builtin", p50, 20.0, p99,
             confidence=_ci((p50 - 0.1, p50 + 0.1), (p99 - 0.1, p99 + 0.1)),
             steady_state=_steady(verdict))
        for i, (p50, p99, verdict) in enumerate(
            ((10.0, 30.0, "steady"), (12.0, 36.0, "rising"), (14.0, 42.0, "steady")))
    ]  # fmt: skip
    comparison = compare(dirs)
    (row,) = comparison.rows
    half = stats.t.ppf(0.975, 2) * 2.0 / 3**0.5  # the p50s 10, 12, 14: mean 12, sd 2
    assert row.ci_method == "across runs"
    assert row.p50_ci95 == pytest.approx([12.0 - half, 12.0 + half])
    assert row.p99_ci95 == pytest.approx([36.0 - 3 * half, 36.0 + 3 * half])
    assert row.steady == ["steady", "rising", "steady"]
    text = format_table(comparison, wide=True)
    assert "12 [7–17]" in text and "2 steady, 1 rising" in text
    assert "Student-t" in text and "moving-block" not in text


def test_one_run_per_stage_gives_a_within_run_interval_and_no_verdict(tmp_path):
    dirs = [
        _run(tmp_path, "i", "ingest", "builtin", 100.0, 150.0, 200.0,
             confidence=_ci((96.0, 110.0), (190.0, 210.0))),
        _run(tmp_path, "p", "parse", "builtin", 103.0, 160.0, 300.0,
             confidence=_ci((100.0, 112.0), (290.0, 310.0))),
    ]  # fmt: skip
    comparison = compare(dirs)
    ingest, parse = comparison.rows
    # each side from the bounds on its own side: below, parse's 3 under and ingest's 10 over
    assert parse.increment_p50_ci95 == pytest.approx([3.0 - 109**0.5, 3.0 + 97**0.5])
    assert parse.increment_p99_ci95 == pytest.approx([100 - 200**0.5, 100 + 200**0.5])
    for q in ("p50", "p99"):
        assert getattr(parse, f"increment_{q}_method") == "within-run"
        assert (
            getattr(parse, f"increment_{q}_p") is None
            and getattr(parse, f"increment_{q}_p_adjusted") is None
            and getattr(parse, f"increment_{q}_ci95_joint") is None
        )
        # p99's interval excludes 0, and still no verdict: one run per stage
        assert getattr(parse, f"increment_{q}_significant") is None
        assert (
            getattr(ingest, f"increment_{q}_ci95") is None
            and getattr(ingest, f"increment_{q}_method") is None
        )
    assert comparison.tests == 0
    assert comparison.significance["no_verdict"].startswith("fewer than 3 runs of a stage")
    text = format_table(comparison, wide=True)
    assert "+3 [−7–+13] n.v." in text and "+100 [+86–+114] n.v." in text
    assert "n.v.: no verdict, fewer than 3 runs of a stage" in text and "jointly" not in text
    assert comparison.resolution is None and "smallest difference" not in text
    assert "+3 [−7–+13] n.v." in to_markdown(comparison)


def _rounds(tmp_path, p50s, p99s=None, confidence=True):
    """One run per stage and round: ``p50s`` maps a stage to its p50 in each round (p99
    twice p50 unless ``p99s`` gives them); the runs listed out of order, with their rounds."""
    dirs, rounds = [], []
    for stage, values in p50s.items():
        for k, p50 in enumerate(values, 1):
            p99 = (p99s or {}).get(stage, [2 * v for v in values])[k - 1]
            ci = _ci((p50 - 1, p50 + 1), (p99 - 2, p99 + 2)) if confidence else None
            run_dir = _run(tmp_path, f"{stage}{k}", stage, "builtin", p50, p50, p99,
                           confidence=ci)  # fmt: skip
            dirs.append(run_dir)
            rounds.append(k)
    return dirs[::-1], rounds[::-1]


def test_increments_in_rounds_take_a_student_t_interval_of_the_per_round_differences(tmp_path):
    from scipy import stats

    # ingest drifts with the host from round to round; join adds 400, 410, 420 on top
    dirs, rounds = _rounds(tmp_path, {"ingest": [10.0, 30.0, 20.0], "join": [410.0, 440.0, 440.0]})
    comparison = compare(dirs, rounds=rounds)
    ingest, join = comparison.rows
    assert join.run_rounds == [3, 2, 1] and join.increment_p50_rounds == [400, 410, 420]
    assert ingest.increment_p50_rounds is None
    half = stats.t.ppf(0.975, 2) * 10 / 3**0.5  # mean 410, sd 10 over 3 rounds
    assert join.increment_p50 == pytest.approx(410.0)
    assert join.increment_p50_ci95 == pytest.approx([410 - half, 410 + half])
    assert join.increment_p50_method == "rounds"
    assert join.increment_p50_p == pytest.approx(stats.ttest_1samp([400, 410, 420], 0).pvalue)
    assert join.increment_p50_significant is True
    # the same values as runs made apart: the host's drift stays in, Welch's interval is wider
    apart = compare(dirs).rows[1]
    assert apart.increment_p50_method == "welch" and apart.increment_p50_rounds is None
    assert apart.increment_p50 == pytest.approx(410.0)
    width = apart.increment_p50_ci95[1] - apart.increment_p50_ci95[0]
    assert width > 2 * half
    text = format_table(comparison, wide=True)
    assert "in rounds: [lo–hi] Student-t on the per-round differences" in text


def test_fewer_than_three_rounds_show_the_within_run_interval_without_a_verdict(tmp_path):
    dirs, rounds = _rounds(tmp_path, {"ingest": [10.0, 30.0], "join": [410.0, 440.0]})
    comparison = compare(dirs, rounds=rounds)
    join = comparison.rows[1]
    assert join.increment_p50_rounds == [400, 410]
    assert join.increment_p50 == pytest.approx(405.0)
    # the mean of two differences, each run ±1: each bound √4 · ½ = 1 away
    assert join.increment_p50_ci95 == pytest.approx([404.0, 406.0])
    assert join.increment_p50_method == "within-run"
    assert join.increment_p50_significant is None and comparison.tests == 0
    assert "+405 [+404–+406] n.v." in format_table(comparison, wide=True)


def test_a_tables_verdicts_are_made_with_the_intervals_printed_beside_them(tmp_path):
    from scipy import stats

    # parse adds 2, 3, 4 (p 0.035 alone); join adds about 400 at every percentile
    dirs, rounds = _rounds(
        tmp_path,
        {"ingest": [10.0, 20.0, 30.0], "parse": [12.0, 23.0, 34.0], "join": [412, 433, 444]},
        {"ingest": [20.0, 40.0, 60.0], "parse": [22.0, 43.0, 64.0], "join": [800, 850, 900]},
    )
    comparison = compare(dirs, rounds=rounds)
    _, parse, join = comparison.rows
    raw = stats.ttest_1samp([2, 3, 4], 0).pvalue
    assert parse.increment_p50_p == pytest.approx(raw) and raw < 0.05
    assert parse.increment_p50_ci95[0] > 0  # its own 95 % interval excludes 0
    # four tests: each interval at 1 − 5 %/4, each p-value times 4
    assert comparison.tests == 4
    half = stats.t.ppf(1 - 0.05 / 8, 2) * stats.tstd([2, 3, 4]) / 3**0.5
    assert parse.increment_p50_ci95_joint == pytest.approx([3.0 - half, 3.0 + half])
    assert parse.increment_p50_ci95_joint[0] < 0 < parse.increment_p50_ci95_joint[1]
    assert parse.increment_p50_p_adjusted == pytest.approx(4 * raw)
    assert parse.increment_p50_significant is False
    assert join.increment_p50_significant is True and join.increment_p99_significant is True
    for row in (parse, join):
        for q in ("p50", "p99"):
            lo, hi = getattr(row, f"increment_{q}_ci95_joint")
            assert getattr(row, f"increment_{q}_significant") == (lo > 0 or hi < 0)
    needed = paired_t([2.0, 3.0, 4.0]).rounds_to_resolve(4)
    assert needed is not None and needed > 3
    assert comparison.significance == {
        "level": 0.95, "correction": "bonferroni", "tests": 4, "min_runs": 3, "no_verdict": None,
        "within_noise": {"what": "parse/builtin +p50", "difference_ms": pytest.approx(3.0),
                         "spread_ms": pytest.approx(1.0), "method": "rounds", "runs": 3,
                         "needed": needed},
    }  # fmt: skip
    text = format_table(comparison, wide=True)
    shown = f"+3.0 [{format_ms(3.0 - half, signed=True)}–{format_ms(3.0 + half, signed=True)}] n.s."
    assert shown in text
    assert "a verdict's [lo–hi] holds jointly with the table's other 3 tested ones at 95 %" in text
    line = (
        "within noise, the smallest difference: parse/builtin +p50 +3.0 ms, judged on 3 "
        f"rounds with a spread (SD) of 1.0 ms; about {needed} rounds (suite --repeat {needed})"
    )
    assert line in text and line in to_markdown(comparison)
    compact = format_table(comparison)
    assert shown.removesuffix(" n.s.") in compact and "within noise" in compact
    assert f"about {needed} rounds (suite --repeat {needed})" in " ".join(compact.split())


def test_runs_without_intervals_or_steadiness_still_compare(tmp_path):
    # a period too short has no intervals, nor a trend
    bare = _run(tmp_path, "bare", "ingest", "builtin", 100.0, 150.0, 200.0)
    ci = _ci((110.0, 130.0), (250.0, 270.0))
    full = _run(tmp_path, "full", "parse", "builtin", 120.0, 170.0, 260.0,
                confidence=ci, steady_state=_steady("falling"))  # fmt: skip
    comparison = compare([bare, full])
    ingest, parse = comparison.rows
    assert (ingest.p50_ci95, ingest.ci_method, ingest.steady) == (None, None, [None])
    assert (parse.p50_ci95, parse.ci_method) == ([110.0, 130.0], "within-run")
    assert parse.steady == ["falling"]
    assert parse.increment_p50 == 20.0
    assert parse.increment_p50_ci95 is None and parse.increment_p50_significant is None
    assert parse.increment_p99_significant is None
    lines = format_table(comparison, wide=True).splitlines()
    assert lines[2].split()[:3] == ["ingest", "builtin", "100"]
    assert "+20" in lines[3].split() and "+20 [" not in lines[3] and "n.s." not in lines[3]
    assert "falling" in lines[3]
    only_bare = format_table(compare([bare]), wide=True)
    assert "no intervals" in only_bare


def test_comparison_rows_keep_the_keys_suite_consumers_read(tmp_path):
    rows = compare([_run(tmp_path, "a", "ingest", "builtin", 1.0, 2.0, 3.0)]).rows
    assert isinstance(compare([tmp_path / "a"]), Comparison)
    assert {
        "stage", "impl", "p50", "p95", "p99", "p50_spread", "p95_spread", "p99_spread",
        "increment_p50", "increment_p95", "increment_p99", "increment_over", "repetitions",
        "run_dir", "run_dirs",
    } <= set(rows[0].as_dict())  # fmt: skip


def _paced(before, after):
    return {"machine": {"pace": {"before_ms": before, "after_ms": after}}}


def test_each_row_shows_the_pace_its_runs_were_made_at(tmp_path):
    dirs = [
        _run(tmp_path, "i1", "ingest", "builtin", 60.0, 90.0, 120.0, **_paced(40.0, 42.0)),
        _run(tmp_path, "i2", "ingest", "builtin", 62.0, 90.0, 120.0, **_paced(44.0, None)),
        _run(tmp_path, "i3", "ingest", "builtin", 64.0, 90.0, 120.0, **_paced(42.0, 42.0)),
        # a run not made by `stagebench run` has no pace, and does not count
        _run(tmp_path, "j", "join", "builtin", 500.0, 800.0, 1000.0),
    ]
    comparison = compare(dirs)
    ingest, join = comparison.rows
    assert ingest.run_paces_ms == [41.0, 44.0, 42.0] and ingest.pace_ms == 42.0
    assert join.run_paces_ms == [None] and join.pace_ms is None
    # paces 41, 42, 44: deviations 1, 0, 2 from the median 42
    assert comparison.pace_spread == round(1 / 42, 4)
    assert comparison.pace_drift == pytest.approx(1 / 42 * 1.96 * 2**0.5 * 1.4826, abs=1e-3)
    # join adds 438 ms over 62: far beyond a 10 % drift of ingest
    assert join.increment_p50_within_pace is False and comparison.pace_note is None
    table = format_table(comparison, wide=True)
    assert "pace" in table.splitlines()[0] and "PACE" not in table
    assert "median absolute deviation of 2.4 % of the median" in table


def test_a_comparison_names_the_increments_a_host_drift_could_explain(tmp_path):
    dirs = [
        _run(tmp_path, "i", "ingest", "builtin", 60.0, 90.0, 120.0, **_paced(40.0, 40.0)),
        _run(tmp_path, "p", "parse", "builtin", 70.0, 110.0, 200.0, **_paced(50.0, 50.0)),
    ]
    comparison = compare(dirs)
    # median 45, deviations 5: 11 %, so two runs' paces differ by up to 46 %
    assert comparison.pace_spread == round(5 / 45, 4)
    parse = comparison.rows[1]
    # +10 over 60 is within 46 % of ingest's p50; +80 over 120 is not
    assert parse.increment_p50_within_pace is True
    assert parse.increment_p99_within_pace is False
    assert comparison.host_explains == ["parse/builtin +p50 (+10 ms)"]
    for text in (format_table(comparison, wide=True), to_markdown(comparison)):
        assert "PACE" in text and "40 to 50 ms" in text
        assert "host drift of that size could explain parse/builtin +p50 (+10 ms)" in text


def test_a_variant_takes_its_increment_over_the_stage_it_builds_on(tmp_path):
    """tumbling-union builds on parse, and sliding still on tumbling though the variant
    sits between them on the ladder; a real-time run is a row of its own, and the
    trigger that tells it apart is no mixed setting."""
    dirs = [
        _run(tmp_path, "p", "parse", "builtin", 30.0, 40.0, 50.0, config=_config("p")),
        _run(tmp_path, "j", "join", "builtin", 200.0, 250.0, 300.0, config=_config("j")),
        _run(tmp_path, "t", "tumbling", "builtin", 3000.0, 3100.0, 3200.0, config=_config("t")),
        _run(tmp_path, "u", "tumbling-union", "builtin", 180.0, 250.0, 300.0,
             config=_config("u")),
        _run(tmp_path, "r", "tumbling-union", "builtin", 40.0, 50.0, 60.0,
             config=_config("r", trigger="real-time")),
        _run(tmp_path, "s", "sliding", "builtin", 4000.0, 4100.0, 4200.0, config=_config("s")),
    ]  # fmt: skip
    comparison = compare(dirs)
    rows = {(r.stage, r.impl): r for r in comparison.rows}
    assert [(r.stage, r.impl) for r in comparison.rows] == [
        ("parse", "builtin"), ("join", "builtin"), ("tumbling", "builtin"),
        ("tumbling-union", "builtin"), ("tumbling-union", "builtin@real-time"),
        ("sliding", "builtin"),
    ]  # fmt: skip
    assert rows["tumbling-union", "builtin"].increment_over == "parse/builtin"
    assert rows["tumbling-union", "builtin@real-time"].increment_p50 == 10.0
    assert rows["sliding", "builtin"].increment_over == "tumbling/builtin"
    assert rows["sliding", "builtin"].increment_p50 == 1000.0
    assert comparison.differences == []
