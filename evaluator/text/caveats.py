"""The evaluator's own warnings: why a run's numbers should not be trusted, or not
taken as the pipeline's steady latency.

Each is one sentence that says what to do about it; :func:`evaluator.summary.build_summary`
logs them and lists them in summary.json's ``warnings`` after the run's own.
"""

from evaluator.config import EvaluatorConfig
from evaluator.latencies.latency import Period


def steady_warnings(steady: dict | None) -> list[str]:
    """Why the measured period's latency may not be the pipeline's steady latency."""
    if steady is None:
        return ["too few measured seconds to tell whether the latency was steady"]
    slope = (
        f"per-second p50 {steady['verdict']} by {steady['slope_ms_per_min']:+.0f} ms/min "
        f"(95 % interval {steady['ci95'][0]:+.0f} to {steady['ci95'][1]:+.0f})"
    )
    if steady["verdict"] == "rising":
        return [
            f"not steady: {slope}: the offered rate is above what this stage sustains "
            "(overloaded), or the machine is"
        ]
    if steady["verdict"] == "falling":
        return [f"not steady: {slope}: still warming up; measure longer or warm up longer"]
    if steady["verdict"] == "undetermined":
        lo, hi = steady["change_ms"]
        change = (
            f"the per-second p50 changed by {lo:+,.0f} to {hi:+,.0f} ms over the measured "
            f"period (95 % interval{_worth(steady)}), not all within "
            f"±{steady['allowed_ms']:,.0f} ms (steady_tolerance {steady['tolerance'] * 100:g} % "
            "of its median)"
        )
        if hi < 0:
            return [f"steadiness not shown: {change}: it fell, still warming up; warm up longer"]
        if lo > 0:
            return [f"steadiness not shown: {change}: it rose, perhaps overloaded"]
        return [
            f"steadiness not shown: {change}: too short or too noisy a period to tell a "
            "drift of that size; measure longer"
        ]
    return []


def _worth(steady: dict) -> str:
    """What the seconds are worth once their autocorrelation is counted: why an interval
    can be wider than the latency itself."""
    if steady.get("effective_seconds") is None:
        return ""
    return f"; {seconds_worth(steady)}"


def seconds_worth(steady: dict) -> str:
    """The measured seconds with outputs and, where recorded, what they are worth:
    ``48 seconds with outputs, worth about 5 independent ones``."""
    seconds = f"{steady['seconds']} seconds with outputs"
    effective = steady.get("effective_seconds")
    if effective is None:
        return seconds
    worth = max(round(effective), 1)
    return f"{seconds}, worth about {worth} independent {'one' if worth == 1 else 'ones'}"


_DEFECTS = {
    "input_ts_mismatch": "carry an input_ts_latest that is not their latest input's broker "
    "timestamp (the pipeline carries a wrong clock; latencies here come from the input topics)",
    "input_ts_earliest_mismatch": "carry an input_ts_earliest that is not their earliest "
    "input's broker timestamp",
    "input_count_mismatch": "carry an input_count that is not the number of their inputs",
    "wrong_values": "have values that differ from those computed from their inputs "
    "(see wrong in summary.json)",
    "unexpected": "are explained by no input (they have no latency)",
}


def distrust(records: dict) -> list[str]:
    """Why this run's outputs contradict its inputs (empty: they do not)."""
    out = [
        f"{records[key]} outputs {what}: a pipeline defect, do not trust this run"
        for key, what in _DEFECTS.items()
        if records.get(key)
    ]
    if records["negative"]:
        out.append(
            f"{records['negative']} negative latencies: outputs appended before their inputs, "
            "timestamps from different clocks; do not trust these numbers"
        )
    return out


def missing_warning(missing: dict | None) -> list[str]:
    """How many outputs are missing and where their inputs are (see missing in summary.json)."""
    if not missing:
        return []
    first, last = missing["spans"][0][0], missing["spans"][-1][1]
    spans = missing["spans_total"]
    where = ", ".join(f"{k}={v}" for k, v in missing["examples"][0].items())
    return [
        f"{missing['count']} missing outputs, from inputs appended in {spans} stretch(es) of "
        f"broker seconds between {first} and {last} (epoch s); the first: {where}"
    ]


SEND_DELAY_WARN_MS = 100.0
"""The publisher's default ``behind_warn_ms``: the send delay a run without one is held to."""


def send_delay_warning(
    intended: dict | None, latency: dict, warn_ms: float = SEND_DELAY_WARN_MS
) -> list[str]:
    """Why the latency from the intended send time is above the broker-clock latency:
    inputs that reached the broker more than ``warn_ms`` after their schedule."""
    if intended is None or not intended["send_delay_ms"]["count"]:
        return []
    delay = intended["send_delay_ms"]
    if delay["max"] <= warn_ms:
        return []
    clock = (
        "; the broker runs on another host, so these figures mix its clock with the publisher's"
        if intended["same_clock"] is False
        else ""
    )
    return [
        f"inputs reached the broker up to {delay['max']:,.0f} ms after their scheduled send "
        f"time (p99 {delay['p99']:,.0f} ms): the publisher fell behind its schedule, so the "
        "offered load was lower than asked and the broker-clock latency, which starts at "
        "the append, leaves that wait out; from the intended send time the p50 is "
        f"{_ms(intended['latency_ms']['p50'])} and the p99 {_ms(intended['latency_ms']['p99'])} "
        f"(broker clock: {_ms(latency['p50'])} and {_ms(latency['p99'])}; latency_intended){clock}"
    ]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def run_warnings(
    records: dict, config: EvaluatorConfig, period: Period, run_marked_start: bool
) -> list[str]:
    """No outputs, an untrimmed warm-up, duplicate or malformed outputs, an empty period."""
    out = []
    if records["outputs"] == 0:
        out.append("no outputs in the measured period")
    if config.warmup_s == 0 and not run_marked_start:
        out.append("warm-up not trimmed (warmup_s = 0): start-up latencies are included")
    if records.get("duplicates"):
        out.append(
            f"{records['duplicates']} duplicate outputs: an output of the same identity was "
            "written again (an at-least-once sink after a restart, or a defect); only the "
            "first counts"
        )
    if records.get("malformed_outputs"):
        out.append(
            f"{records['malformed_outputs']} malformed outputs: not a JSON object, or "
            "lacking a field the stage needs to measure and identify them, or of the wrong "
            "type (docs/own-pipeline.md); they are left out of every other number"
        )
    if period.hi < period.lo:
        out.append("the measured period is empty (warm-up and end cut cover the whole run)")
    return out
