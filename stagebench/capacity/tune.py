"""The setting at which an engine sustains the most under the search's criteria, found by
searching (``stagebench capacity --tune``), beside its capacity at the latency settings.

The candidates are the engine's settings that trade latency for throughput
(:mod:`stagebench.config.profiles`).

The search (:func:`tune`), within a budget: a capacity search at the setting the user
gave; then, one candidate at a time (the throughput profile first, then each setting's
other values changed alone from the best so far), one *challenge* probe at the rate the
best failed at. Only a candidate that sustains that rate earns a search of its own (from
that rate up), and it becomes the best when its capacity is higher. A candidate costs one
probe unless it beats the best, not a whole search: the grid is never walked blindly.
"""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from stagebench.config.profiles import profile
from stagebench.results.capacity import CapacityResult

Setting = dict[str, Any]
"""Tuned setting → its value."""


def candidates(found: Mapping[str, tuple[Any, ...]], best: Setting) -> Iterator[Setting]:
    """The settings to challenge the best with, in order: the throughput profile, then
    each setting's other values, one changed at a time. Each at most once, never the best."""
    seen = [dict(best)]
    proposals = [{**best, **profile(found, "throughput")}]
    proposals += [{**best, key: value} for key, values in found.items() for value in values]
    for proposal in proposals:
        if proposal not in seen:
            seen.append(proposal)
            yield proposal


def score(result: CapacityResult) -> float:
    """What a search found: its fitted capacity, else the highest rate sustained (0: none)."""
    return result.capacity_mps or result.sustainable_mps or 0.0


@dataclass
class Tuning:
    """What :func:`tune` did: the search at the given setting, the best found, and each
    candidate tried (its setting, the rate it was challenged at, whether it sustained it,
    and the capacity of its search when it earned one)."""

    start: CapacityResult
    best: CapacityResult
    best_setting: Setting
    tried: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = "exhausted"
    """exhausted (every candidate tried), budget, interrupted (Ctrl-C), or why it could not
    tune (no rate failed)."""


def tune(
    found: Mapping[str, tuple[Any, ...]],
    start: Setting,
    search: Callable[[Setting, float | None], CapacityResult],
    challenge: Callable[[Setting, float], bool],
    time_left: Callable[[], float | None],
) -> Tuning:
    """Search at ``start``, then challenge it with each candidate while ``time_left()``
    (s; None: no budget) exceeds the longest search so far (see the module).
    ``search(setting, from_rate)`` runs a capacity search (None: the usual first rate);
    ``challenge(setting, rate)`` one probe, True when it was sustainable."""
    first = search(start, None)
    tuning = Tuning(first, first, dict(start))
    longest = first.seconds
    pending = list(candidates(found, start))
    if first.stopped == "interrupted":
        tuning.stopped, pending = "interrupted", []
    while pending:
        rate = tuning.best.first_unsustainable_mps
        if rate is None:
            tuning.stopped = "no rate failed at the best setting: nothing to gain"
            break
        if (left := time_left()) is not None and left < longest:
            tuning.stopped = "budget"
            break
        setting = pending.pop(0)
        try:
            passed = challenge(setting, rate)
        except KeyboardInterrupt:
            tuning.stopped = "interrupted"
            break
        trial: dict[str, Any] = {"setting": setting, "challenged_mps": rate, "sustained": passed}
        if passed:
            result = search(setting, rate)
            longest = max(longest, result.seconds)
            trial["capacity_mps"], trial["dir"] = score(result), result.dir
            if result.stopped == "interrupted":
                tuning.tried.append(trial)
                tuning.stopped = "interrupted"
                break
            if score(result) > score(tuning.best):
                tuning.best, tuning.best_setting = result, dict(setting)
                # the new best's neighbours, the ones not tried yet
                tried = [start, setting, *(t["setting"] for t in tuning.tried)]
                pending = [c for c in candidates(found, setting) if c not in tried]
        tuning.tried.append(trial)
    return tuning
