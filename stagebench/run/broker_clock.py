"""A run's moments on the broker's clock: the marks of its measured period, of a fault and
of the job's start (the newest LogAppendTime of its input topics), and the windows of a
burst workload's bursts, placed after its first input. One clock for every timestamp the
evaluator compares (docs/method.md#workloads)."""

import logging
import time
from collections.abc import Callable

from evaluator.recovery.windows import Window
from ground.errors import BrokerError
from ground.kafka.clock import newest_timestamp, oldest_timestamp
from publisher.config import PublisherConfig
from publisher.sizing import derive, schedule
from publisher.workload import Workload

log = logging.getLogger(__name__)

MARK_ATTEMPTS = 5
MARK_RETRY_S = 2.0


class BrokerClock:
    """The broker's clock as the run's input topics show it; ``check_health`` is called
    between attempts, so a dead run fails as itself rather than as an unreadable clock."""

    def __init__(self, bootstrap: str, inputs: list[str], check_health: Callable[[], None]):
        self.bootstrap, self.inputs, self.check_health = bootstrap, inputs, check_health

    def mark(self, what: str, after_ms: int | None = None, attempts: int = MARK_ATTEMPTS) -> int:
        """The broker's clock now: the newest LogAppendTime of the input topics.

        Retried: a period whose end cannot be read is never silently replaced by another.
        With ``after_ms``, only a mark later than it counts (the first input appended
        after a fault, not the last one before it).
        """
        for attempt in range(attempts):
            try:
                mark = newest_timestamp(self.bootstrap, self.inputs)
                if mark is not None and (after_ms is None or mark > after_ms):
                    return mark
            except BrokerError as err:
                log.info("reading the broker clock (%s), attempt %d: %s", what, attempt + 1, err)
            self.check_health()
            time.sleep(MARK_RETRY_S)
        raise BrokerError(
            f"could not read the broker's clock for the {what} after {attempts} attempts: "
            f"no input record readable on {self.bootstrap}"
        )

    def bursts(self, load: Workload, publisher: PublisherConfig) -> tuple[Window, ...]:
        """The bursts that were published, as windows in broker time (for the recovery
        the evaluator reports after each).

        The publisher keeps no per-burst send times and records carry only their
        scheduled send time, so the schedule's burst offsets are placed after the
        LogAppendTime of the run's first input: the schedule's first pair is due at
        its start and the topics are fresh, so that record marks the start on the
        broker's own clock, late by one send (milliseconds, beside the one-second
        series recovery is read from); the publisher's start time would add its
        clock's skew. The windows are as scheduled: a publisher trailing its schedule
        in a burst (send lag in publisher.json, a warning above ``behind_warn_ms``)
        makes the real burst longer. Bursts due after the last input were never sent.
        """
        if not load.bursts or publisher.from_file:  # a replay has no schedule
            return ()
        planned = schedule(publisher, derive(publisher))
        first = oldest_timestamp(self.bootstrap, self.inputs)
        last = newest_timestamp(self.bootstrap, self.inputs)
        if first is None or last is None:
            return ()
        return tuple(
            Window("burst", first + round(a * 1000), first + round(b * 1000))
            for a, b in planned.burst_windows((last - first) / 1000)
        )
