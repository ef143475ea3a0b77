from stagebench.report.summary_table import format_runs
from tests.evaluator.summaries import made_summary


def _summary(**sections):
    return made_summary(
        run={"stage": "join", "impl": "builtin"},
        records={"outputs": 1200, "missing": 0, "duplicates": 0},
        latency_ms={"p50": 448.0, "p95": 600.0, "p99": 764.0, "max": 900.0},
        **sections,
    )


def test_intervals_and_steadiness_are_columns_and_warnings_stay_last():
    summary = _summary(
        confidence={"method": "batch means over 8 consecutive sections", "sections": 8,
                    "p50": [431, 466.25], "p99": [700.0, 820.0]},
        steady_state={"slope_ms_per_min": 120.4, "ci95": [90.0, 150.0], "mk_p": 0.001,
                      "seconds": 54, "verdict": "rising"},
        warnings=["not steady: per-second p50 rising", "publisher fell behind"],
        trusted=True,
    )  # fmt: skip
    lines = format_runs([summary], wide=True).splitlines()
    header, row = lines[0].split("  "), lines[1]
    assert [h.strip() for h in header if h.strip()][-2:] == ["steady", "checks"]
    assert "448 [431–466]" in row and "764 [700–820]" in row
    assert row.split()[-4:] == ["rising", "+120", "ms/min", "ok"]
    assert "(batch means over 8 consecutive sections)" in lines[2]
    assert lines[-2:] == [
        "WARNING: not steady: per-second p50 rising",
        "WARNING: publisher fell behind",
    ]
    compact = format_runs([summary]).splitlines()
    assert max(map(len, compact)) <= 100 and "p95 ms" not in compact[0]
    assert compact[1].split()[-4:] == ["rising", "+120", "ms/min", "ok"]
    assert compact[-2:] == [
        "WARNING: not steady (in full: --wide, summary.json, report.html)",
        "WARNING: publisher fell behind (in full: --wide, summary.json, report.html)",
    ]


def test_a_run_evaluated_before_intervals_shows_plain_numbers():
    text = format_runs([_summary(confidence=None, steady_state=None)])
    row = text.splitlines()[1]
    assert "448" in row and "[" not in row and row.endswith("-")
    assert len(text.splitlines()) == 2  # no note, no warnings


def test_a_run_whose_outputs_contradict_its_inputs_says_untrusted():
    row = format_runs([_summary(trusted=False)]).splitlines()[1]
    assert row.endswith("UNTRUSTED")


def test_a_fault_run_says_how_it_recovered():
    window = {"kind": "broker-restart", "start_ms": 1, "end_ms": 5001, "recovered": True}
    recovery = {"threshold": 0.2, "windows": [window],
                "summary": {"windows": 1, "recovered": 1, "recovery_s_median": 4.0,
                            "recovery_s_max": 4.0, "peak_ms_max": 5210.0}}  # fmt: skip
    lines = format_runs([_summary(recovery=recovery)]).splitlines()
    assert lines[-1] == (
        "join: 1 disturbance(s) (broker-restart): recovered 1 of 1 to within 20 % of the p50 "
        "before (median 4 s, max 4 s after the end); peak per-second p50 5,210 ms"
    )
    assert not any("disturbance" in line for line in format_runs([_summary()]).splitlines())


def test_a_fault_that_left_the_latency_at_a_new_level_says_where_and_the_process():
    window = {"kind": "broker-restart", "start_ms": 1, "end_ms": 16601, "process": "broker",
              "recovered": False, "recovery_s": None, "settled": True, "settled_s": 2.0,
              "settled_p50_ms": 287.0, "settled_p50_ci95": [281.0, 295.0], "offset": 0.31,
              "offset_ci95": [0.24, 0.38], "level": "new",
              "cause": {"process": "broker", "cpu_percent": [9.5, 14.0],
                        "gc_ms_per_s": [1.0, 3.2]}}  # fmt: skip
    recovery = {"threshold": 0.2, "windows": [window],
                "summary": {"windows": 1, "recovered": 0, "recovery_s_median": None,
                            "recovery_s_max": None, "peak_ms_max": 15167.0}}  # fmt: skip
    lines = format_runs([_summary(recovery=recovery)]).splitlines()
    assert lines[-2].endswith("recovered 0 of 1 to within 20 % of the p50 before (never after "
                              "the end); peak per-second p50 15,167 ms")  # fmt: skip
    assert lines[-1] == (
        "    settled 2 s after the broker-restart at +31 % [+24–+38 %] of the p50 before "
        "(287 ms); broker: CPU 9.5 → 14 % of a core, GC 1 → 3.2 ms/s (before → after)"
    )


def test_a_run_prints_its_p50_as_the_stage_table_does():
    """One precision for every table: whole ms once the value or its interval reaches 10 ms."""
    fast = made_summary(
        run={"stage": "join", "impl": "builtin"},
        latency_ms={"p50": 0.0, "p95": 1.0, "p99": 1.0, "max": 11.0},
        confidence={"method": "m", "p50": [0.0, 1.0], "p99": [1.0, 11.0]},
    )
    row = format_runs([fast]).splitlines()[1]
    assert "0.0 [0.0–1.0]" in row and "1 [1–11]" in row
