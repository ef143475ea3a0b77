"""When each message is due: the open-loop schedule of every workload (docs/method.md#workloads).

A schedule is a pure function of time since the start of the run. The
publisher sends messages in *pairs* (the speed and flow twins of one
location/lane/minute), so schedules count pairs. Time is cut into *ticks* of
``1 / time_scale`` seconds, one data minute each; :meth:`Schedule.tick_offsets`
lists when the pairs of one tick are due. Which location and lane a pair
carries is decided by its position in its tick (see :mod:`publisher.sizing`),
so every location/lane appears at most once per tick.
"""

import math
from dataclasses import dataclass
from typing import Protocol

# Tolerance for float products such as 0.1 s × 2 000 pairs/s that should be whole.
_EPS = 1e-6


class Component(Protocol):
    def offsets(self, a: float, b: float) -> list[float]:
        """Due times (seconds from the start) of this component's pairs in [a, b)."""
        ...


@dataclass(frozen=True)
class Steady:
    """``pairs_per_s`` pairs per second, evenly spaced, from ``start_s`` until ``end_s``."""

    start_s: float
    end_s: float
    pairs_per_s: float

    def _count_before(self, t: float) -> int:
        """How many pairs are due strictly before ``t``."""
        t = min(max(t, self.start_s), self.end_s)
        return max(0, math.ceil((t - self.start_s) * self.pairs_per_s - _EPS))

    def offsets(self, a: float, b: float) -> list[float]:
        if self.pairs_per_s <= 0:
            return []
        first, stop = self._count_before(a), self._count_before(b)
        step = 1.0 / self.pairs_per_s
        return [self.start_s + j * step for j in range(first, stop)]


@dataclass(frozen=True)
class Bursts:
    """``pairs`` extra pairs every ``every_s`` seconds from ``first_s`` on.

    Each burst is spread evenly over ``duration_s``; with 0 every pair of a
    burst is due at the same instant (then how long they take to leave shows
    up as send lag).
    """

    first_s: float
    every_s: float
    duration_s: float
    pairs: int

    def offsets(self, a: float, b: float) -> list[float]:
        if self.pairs <= 0:
            return []
        low = max(0, math.floor((a - self.first_s - self.duration_s) / self.every_s))
        high = math.floor((b - self.first_s) / self.every_s + _EPS)
        result: list[float] = []
        for n in range(low, high + 1):
            start = self.first_s + n * self.every_s
            if self.duration_s > 0:
                burst = Steady(start, start + self.duration_s, self.pairs / self.duration_s)
                result += burst.offsets(a, b)
            elif a - _EPS <= start < b - _EPS:
                result += [start] * self.pairs
        return result

    def windows(self, until_s: float) -> list[tuple[float, float]]:
        """(start, end) in seconds from the start of every burst that starts before ``until_s``."""
        if self.pairs <= 0:
            return []
        found = []
        n = 0
        while (start := self.first_s + n * self.every_s) < until_s - _EPS:
            found.append((start, start + self.duration_s))
            n += 1
        return found


@dataclass(frozen=True)
class Schedule:
    """The whole run: components summed, cut into ticks, bounded by ``end_s``."""

    components: tuple[Component, ...]
    tick_s: float
    end_s: float  # math.inf: until stopped or the message bound is reached

    @property
    def ticks(self) -> float:
        """Number of ticks (math.inf for an unbounded run)."""
        if math.isinf(self.end_s):
            return math.inf
        return math.ceil(self.end_s / self.tick_s - _EPS)

    def tick_offsets(self, k: int) -> list[float]:
        """Sorted due times (seconds from start) of the pairs of tick ``k``."""
        a = k * self.tick_s
        b = min((k + 1) * self.tick_s, self.end_s)
        found: list[float] = []
        for component in self.components:
            found += component.offsets(a, b)
        found.sort()
        return found

    def burst_windows(self, until_s: float) -> list[tuple[float, float]]:
        """(start, end) in seconds from the start of the bursts due before ``until_s``
        (and the schedule's end), in time order; none for a schedule without bursts."""
        until_s = min(until_s, self.end_s)
        found = [w for c in self.components if isinstance(c, Bursts) for w in c.windows(until_s)]
        return sorted(found)


def constant(
    pairs_per_s: float,
    tick_s: float,
    end_s: float,
    lead_in_s: float = 0.0,
    lead_in_pairs_per_s: float = 0.0,
) -> Schedule:
    """The rate until ``end_s``, after ``lead_in_s`` seconds at ``lead_in_pairs_per_s``."""
    if lead_in_s <= 0:
        return Schedule((Steady(0.0, end_s, pairs_per_s),), tick_s, end_s)
    return _after(lead_in_pairs_per_s, lead_in_s, pairs_per_s, tick_s, end_s)


def periodic_burst(
    pairs_per_s: float,
    burst_pairs: int,
    every_s: float,
    duration_s: float,
    tick_s: float,
    end_s: float,
) -> Schedule:
    """Base rate plus a burst every ``every_s`` seconds, the first after one period."""
    return Schedule(
        (Steady(0.0, end_s, pairs_per_s), Bursts(every_s, every_s, duration_s, burst_pairs)),
        tick_s,
        end_s,
    )


def single_burst(
    pairs_per_s: float, backlog_pairs_per_s: float, backlog_s: float, tick_s: float, end_s: float
) -> Schedule:
    """A backlog of ``backlog_s`` seconds at a high rate, then the base rate."""
    return _after(backlog_pairs_per_s, backlog_s, pairs_per_s, tick_s, end_s)


def _after(
    first_pairs_per_s: float, first_s: float, pairs_per_s: float, tick_s: float, end_s: float
) -> Schedule:
    """``first_s`` seconds at ``first_pairs_per_s``, then ``pairs_per_s`` until ``end_s``."""
    return Schedule(
        (Steady(0.0, first_s, first_pairs_per_s), Steady(first_s, end_s, pairs_per_s)),
        tick_s,
        end_s,
    )


def ramp(
    pairs_per_s_steps: tuple[float, ...], step_s: float, tick_s: float, end_s: float
) -> Schedule:
    """One step of ``step_s`` seconds per rate; the run ends with the last step at the latest."""
    steps = tuple(
        Steady(i * step_s, (i + 1) * step_s, rate) for i, rate in enumerate(pairs_per_s_steps)
    )
    return Schedule(steps, tick_s, min(end_s, len(steps) * step_s))


@dataclass(frozen=True)
class Shape:
    """What every workload's schedule is built from, in pairs (speed + flow twins)."""

    pairs_per_s: float
    """The base rate."""
    tick_s: float
    end_s: float
    burst_pairs: int = 0
    burst_every_s: float = 10.0
    burst_duration_s: float = 0.0
    backlog_pairs_per_s: float = 0.0
    backlog_s: float = 0.0
    ramp_pairs_per_s: tuple[float, ...] = ()
    ramp_step_s: float = 10.0
    lead_in_s: float = 0.0
    lead_in_pairs_per_s: float = 0.0
