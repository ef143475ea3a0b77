"""The resource sampler, its summary and the machine warnings; neither Kafka nor Spark."""

import os
import subprocess
import sys
import time
from collections import namedtuple

import psutil
import pytest

from stagebench.resources import sampler as resources
from stagebench.resources.sampler import CSV_FIELDS, Group, ResourceSampler
from stagebench.resources.summary import (
    OUTSIDE_CORES_WARN,
    SATURATED_SHARE_WARN,
    STEAL_PCT_WARN,
    machine_warnings,
    run_summary,
    summarise,
)

BUSY_LOOP = [sys.executable, "-c", "while True: pass"]


def group_row(time_ms, process, cpu, rss=100.0, heap=None):
    return {"time_ms": time_ms, "process": process, "cpu_percent": cpu, "rss_mb": rss,
            "heap_used_mb": heap}  # fmt: skip


def machine_rows(time_ms, busy, outside, steal=0.0, iowait=0.0):
    machine = {"time_ms": time_ms, "process": "machine", "cpu_percent": busy, "rss_mb": None,
               "heap_used_mb": None, "cpu_user": busy - steal, "cpu_system": 0.0,
               "cpu_iowait": iowait, "cpu_steal": steal}  # fmt: skip
    return [machine, group_row(time_ms, "outside", outside, rss=None)]


def test_summary_keeps_only_the_measured_period_and_describes_the_machine():
    samples = []
    # before the period: a saturated machine and a huge engine, which must not count
    samples += [group_row(1000, "engine", 190.0, rss=900.0), *machine_rows(1000, 200.0, 10.0)]
    measured = [(2000, 100.0, 120.0, 20.0), (3000, 80.0, 190.0, 110.0),
                (4000, 60.0, 180.0, 120.0), (5000, 40.0, 60.0, 20.0)]  # fmt: skip
    for t, engine, busy, outside in measured:
        samples += [group_row(t, "engine", engine), *machine_rows(t, busy, outside, 2.0, 4.0)]
    samples += [group_row(6000, "engine", 0.0), *machine_rows(6000, 200.0, 200.0)]  # after

    out = summarise(samples, from_ms=2000, to_ms=5000, cores=2)

    assert out["engine"] == {
        "samples": 4,
        "cpu_percent_mean": 70.0, "cpu_percent_max": 100.0,
        "rss_mb_mean": 100.0, "rss_mb_max": 100.0,
        "heap_used_mb_mean": None, "heap_used_mb_max": None,
        "gc_ms_per_s_mean": None, "gc_ms_per_s_max": None,
        "thread_max_pct_mean": None, "thread_max_pct_max": None, "thread_max_name": None,
    }  # fmt: skip
    assert out["machine"] == {
        "cores": 2,
        "samples": 4,
        "cpu_total_pct_mean": 137.5,
        "cpu_total_pct_max": 190.0,
        "cpu_outside_run_pct_mean": 67.5,
        "cpu_outside_run_pct_max": 120.0,
        "steal_pct_mean": 2.0,
        "iowait_pct_mean": 4.0,
        "saturated_share": 0.5,  # 190 and 180 are ≥ 90 % of 200; 120 and 60 are not
    }
    assert set(out) == {"engine", "machine"}  # "outside" is no group
    assert summarise(samples, cores=2)["machine"]["samples"] == 6  # no bounds: everything
    assert summarise(samples, from_ms=2000, to_ms=5000, cores=4)["machine"]["saturated_share"] == 0


def test_summary_without_machine_rows_has_an_empty_machine_entry():
    out = summarise([group_row(1000, "broker", 10.0)], cores=2)
    assert out["broker"]["samples"] == 1
    assert out["machine"]["samples"] == 0
    assert out["machine"]["saturated_share"] is None
    assert machine_warnings(out) == []


def test_a_runs_summary_adds_the_machines_pace_and_what_the_broker_was_and_used():
    samples = [group_row(1000, "broker", 10.0, rss=310.0),
               group_row(2000, "broker", 30.0, rss=330.0)]  # fmt: skip
    pace = {"before_ms": 50.0, "after_ms": 51.0}
    out = run_summary(samples, 1000, 2000, 2, pace, {"kind": "embedded", "version": "4.3.1"})
    assert out["machine"]["pace"] == pace
    assert out["machine"]["broker"] == {"kind": "embedded", "version": "4.3.1",
                                        "cpu_percent_mean": 20.0, "rss_mb_max": 330.0}  # fmt: skip
    remote = run_summary([], None, None, 2, pace, {"kind": "remote"})["machine"]["broker"]
    assert remote == {"kind": "remote", "cpu_percent_mean": None, "rss_mb_max": None}


def machine_summary(**values):
    entry = {"cores": 2, "samples": 60, "cpu_total_pct_mean": 100.0, "cpu_total_pct_max": 150.0,
             "cpu_outside_run_pct_mean": 0.0, "cpu_outside_run_pct_max": 0.0,
             "steal_pct_mean": 0.0, "iowait_pct_mean": 0.0, "saturated_share": 0.0}  # fmt: skip
    return {"engine": {"samples": 60}, "machine": {**entry, **values}}


@pytest.mark.parametrize(
    ("key", "line", "above", "figure", "text"),
    [
        ("saturated_share", SATURATED_SHARE_WARN, 0.34, "34 %",
         "the machine was saturated: all 2 cores at least 90 % busy in 34 % of the measured "
         "seconds (warn above 10 %)"),
        ("cpu_outside_run_pct_mean", OUTSIDE_CORES_WARN * 100, 96.0, "0.96 cores",
         "other processes used 0.96 cores on average during the measured period "
         "(warn above 0.25 of a core)"),
        ("steal_pct_mean", STEAL_PCT_WARN, 12.5, "12.5 %",
         "the hypervisor took 12.5 % of a core on average from this virtual machine "
         "(CPU steal; warn above 5 %)"),
    ],
)  # fmt: skip
def test_each_machine_warning_starts_just_above_its_line_and_names_the_figure(
    key, line, above, figure, text
):
    assert machine_warnings(machine_summary(**{key: line})) == []
    [just_above] = machine_warnings(machine_summary(**{key: line + 0.001}))
    [warning] = machine_warnings(machine_summary(**{key: above}))
    assert figure in warning
    assert warning == f"{text}: this latency measures this machine, not the pipeline"
    assert just_above != warning


def test_machine_warnings_come_together():
    summary = machine_summary(saturated_share=0.5, cpu_outside_run_pct_mean=80.0, steal_pct_mean=9)
    assert len(machine_warnings(summary)) == 3
    assert machine_warnings(machine_summary()) == []


Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")


def test_machine_cpu_counts_steal_as_busy_and_iowait_as_idle(monkeypatch):
    readings = iter([
        Times(100, 0, 50, 1000, 10, 0, 0, 0, 0, 0),
        # 2 s on 2 cores = 400 ticks of 10 ms: user 0.8 s (0.2 of it nice; guest 0.3 s inside
        # user, not counted twice), system 0.4 s + irq 0.1 s, steal 0.2 s, iowait 0.5 s, idle 2 s
        Times(100.6, 0.2, 50.4, 1002, 10.5, 0.1, 0, 0.2, 0.3, 0),
    ])  # fmt: skip
    monkeypatch.setattr(resources.psutil, "cpu_times", lambda: next(readings))
    monkeypatch.setattr(resources.psutil, "cpu_count", lambda: 2)
    cpu = resources._MachineCpu()
    assert cpu.read() is None  # the baseline
    assert cpu.read() == {
        "cpu_percent": pytest.approx(75.0),  # (0.8 + 0.5 + 0.2) s of 4 core-seconds, of one core
        "cpu_user": pytest.approx(40.0),
        "cpu_system": pytest.approx(25.0),
        "cpu_iowait": pytest.approx(25.0),
        "cpu_steal": pytest.approx(10.0),
    }


def sample_for(groups, seconds=2.5, interval_s=0.5):
    sampler = ResourceSampler(groups, interval_s=interval_s).start()
    time.sleep(seconds)
    return sampler.stop()


def rows_of(samples, process):
    rows = [s for s in samples if s["process"] == process]
    assert len(rows) >= 3, samples
    return rows


def test_a_busy_process_outside_every_group_shows_as_outside():
    child = subprocess.Popen(BUSY_LOOP)
    try:
        time.sleep(0.3)  # running before the sampler's first round
        samples = sample_for({"bench": Group(lambda: [os.getpid()], recursive=False)})
    finally:
        child.kill()
        child.wait()
    bench, outside, machine = (rows_of(samples, p) for p in ("bench", "outside", "machine"))
    assert max(r["cpu_percent"] for r in bench) < 50  # the busy child is not the bench's
    assert sum(r["cpu_percent"] for r in outside) / len(outside) >= 50
    assert min(r["cpu_percent"] for r in machine) >= 50
    assert all(r["cpu_user"] is not None and r["cpu_steal"] is not None for r in machine)
    assert all(set(r) <= set(CSV_FIELDS) for r in samples)


# burns 0.6 s of CPU, then sleeps: its whole CPU time is known once it sleeps
BURN_THEN_SLEEP = [sys.executable, "-c", (
    "import time\nend = time.process_time() + 0.6\n"
    "while time.process_time() < end: pass\ntime.sleep(3600)"
)]  # fmt: skip


def test_a_recursive_group_counts_its_children_from_their_first_second():
    sampler = ResourceSampler({"tree": Group(lambda: [os.getpid()])}, interval_s=1.0).start()
    time.sleep(0.2)  # past the first round, which only sets the baselines
    child = subprocess.Popen(BURN_THEN_SLEEP)  # a new child, found by the next round
    try:
        # until it has burnt its 0.6 s (longer on a loaded machine), then a round more
        deadline = time.monotonic() + 60
        while sum(psutil.Process(child.pid).cpu_times()[:2]) < 0.6:
            assert time.monotonic() < deadline, "the child never burnt its 0.6 s"
            time.sleep(0.2)
        time.sleep(2.0)
        samples = sampler.stop()
        times = psutil.Process(child.pid).cpu_times()
    finally:
        child.kill()
        child.wait()
    tree = [s for s in samples if s["process"] == "tree"]
    assert len(tree) >= 2, samples
    # its CPU of the second it started in counts too (it started after the last round)
    child_s = times.user + times.system
    assert sum(r["cpu_percent"] for r in tree) / 100 >= 0.9 * child_s >= 0.5, (tree, child_s)
    outside = [s for s in samples if s["process"] == "outside"]
    machine = [s for s in samples if s["process"] == "machine"]
    assert len(outside) == len(machine) == len(tree)


# a parent that keeps starting children which burn 0.2 s of CPU and end within a round
SHORT_CHILDREN = [sys.executable, "-c", (
    "import subprocess, sys, time\n"
    "burn = 'import time\\nend = time.process_time() + 0.2\\n' \\\n"
    "    'while time.process_time() < end: pass'\n"
    "while True:\n"
    "    subprocess.run([sys.executable, '-c', burn])\n"
    "    time.sleep(0.05)\n"
)]  # fmt: skip


def test_children_that_start_and_end_between_rounds_count_for_their_group():
    parent = subprocess.Popen(SHORT_CHILDREN)
    try:
        time.sleep(0.3)
        proc = psutil.Process(parent.pid)
        before = proc.cpu_times()
        samples = sample_for({"tree": Group(lambda: [parent.pid])}, seconds=3.0)
        after = proc.cpu_times()
    finally:
        parent.kill()
        parent.wait()
    # what the tree truly used: the parent's own CPU and its reaped children's
    used_s = sum(getattr(after, f) - getattr(before, f)
                 for f in ("user", "system", "children_user", "children_system"))  # fmt: skip
    tree = rows_of(samples, "tree")
    counted_s = sum(r["cpu_percent"] for r in tree) / 100 * 0.5  # rows every 0.5 s
    assert used_s > 0.4, used_s  # the children ran
    assert counted_s >= 0.7 * used_s, (counted_s, used_s)
    assert counted_s <= 1.3 * used_s + 0.1, (counted_s, used_s)  # nothing counted twice


def test_group_names_of_the_machine_rows_are_refused():
    with pytest.raises(ValueError, match="reserved"):
        ResourceSampler({"outside": lambda: []})


# one thread that names itself "spinner" (its name as /proc shows it) and spins, beside
# the main thread, which sleeps
ONE_BUSY_THREAD = [sys.executable, "-c", (
    "import ctypes, threading, time\n"
    "def spin():\n"
    "    ctypes.CDLL(None).prctl(15, b'spinner', 0, 0, 0)\n"
    "    while True: pass\n"
    "threading.Thread(target=spin, daemon=True).start()\n"
    "time.sleep(3600)\n"
)]  # fmt: skip


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread names from /proc")
def test_the_busiest_thread_of_a_group_is_sampled_with_its_name():
    child = subprocess.Popen(ONE_BUSY_THREAD)
    try:
        time.sleep(0.3)
        samples = sample_for({"engine": Group(lambda: [child.pid])}, seconds=3.0)
    finally:
        child.kill()
        child.wait()
    rows = [r for r in rows_of(samples, "engine") if r["thread_max_pct"] is not None]
    assert rows, samples
    # the group's CPU is the spinning thread's: the main thread sleeps
    for row in rows:
        assert row["thread_max_name"] == "spinner", row
        assert row["thread_max_pct"] >= 0.8 * row["cpu_percent"] - 5, row
    assert max(r["thread_max_pct"] for r in rows) >= 30  # it ran, however loaded the machine
    summary = summarise(samples, cores=2)["engine"]
    assert summary["thread_max_name"] == "spinner"
    assert summary["thread_max_pct_mean"] is not None
