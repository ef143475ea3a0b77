"""What the send loop publishes, tick by tick: synthetic data or a replayed file.

A source tells the loop when the sends of each tick are due
(:meth:`Source.offsets`) and produces the messages of one send
(:meth:`Source.send`); the loop owns pacing, lag and counting. One send of
:class:`SyntheticSource` is the speed/flow pair of one location and lane.
"""

from collections.abc import Callable
from typing import Protocol

from publisher.config import PublisherConfig
from publisher.model import MINUTES_PER_DAY, demand, observe
from publisher.sizing import LocationPool, Sizing, schedule

Produce = Callable[[str, bytes, bytes], None]
"""produce(topic, value, key)"""


class Source(Protocol):
    def offsets(self, tick: int) -> list[float] | None:
        """Due times (s from start, sorted) of the sends of ``tick``; None after the last."""
        ...

    def send(
        self, produce: Produce, tick: int, index: int, observation_ts: int, scheduled_ts: int
    ) -> int:
        """Produce the messages of send ``index`` of ``tick``; returns how many."""
        ...


class SyntheticSource:
    """Pairs of the location pool, paced by the workload schedule."""

    def __init__(self, config: PublisherConfig, sizing: Sizing) -> None:
        self._config = config
        self._schedule = schedule(config, sizing)
        self.pool = LocationPool(config)
        self._demand = 0.0

    def offsets(self, tick: int) -> list[float] | None:
        if tick >= self._schedule.ticks:
            return None
        found = self._schedule.tick_offsets(tick)
        self.pool.ensure(len(found))
        self._demand = demand((self._config.start_minute + tick) % MINUTES_PER_DAY)
        return found

    def send(
        self, produce: Produce, tick: int, index: int, observation_ts: int, scheduled_ts: int
    ) -> int:
        pool = self.pool
        loc_index = pool.slot_location[index]
        encoder = pool.encoders[index]
        obs = observe(
            pool.locations[loc_index],
            pool.slot_lane[index],
            self._config.start_minute + tick,
            self._config.seed,
            self._demand,
        )
        seq = pool.seq[loc_index]
        pool.seq[loc_index] = seq + 1
        produce(
            self._config.speed_topic,
            encoder.speed(observation_ts, scheduled_ts, seq, obs.accuracy, obs.speed),
            encoder.key,
        )
        produce(
            self._config.flow_topic,
            encoder.flow(observation_ts, scheduled_ts, seq, obs.accuracy, obs.flow),
            encoder.key,
        )
        return 2
