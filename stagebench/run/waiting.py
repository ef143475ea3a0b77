"""Waiting out a stretch of a run with a progress display while the run's health is
checked: the run flow (:mod:`stagebench.run.runner`) waits so through its measured
period, and a broker fault (:mod:`stagebench.run.faults`) through the broker's outage.
The run's composition root (:mod:`stagebench.run.root`) builds the one both use."""

import time
from collections.abc import Callable
from dataclasses import dataclass

from stagebench.console import Console

HEALTH_EVERY_S = 2.0


@dataclass(frozen=True)
class Waiter:
    """Waits with a progress bar, checking the run's health every ``HEALTH_EVERY_S``."""

    console: Console
    check: Callable[[], None]
    """The run's health check: raises when the run must fail."""
    progress: Callable[[], str]
    """The line shown beside the bar (the publisher's progress)."""

    def __call__(self, seconds: float, what: str) -> None:
        """Sleep ``seconds`` with a progress display, checking the run's health meanwhile."""
        began = time.monotonic()
        deadline = began + seconds
        next_health = 0.0
        with self.console.task(what, seconds) as update:
            while (now := time.monotonic()) < deadline:
                if now >= next_health:
                    self.check()
                    next_health = now + HEALTH_EVERY_S
                update(now - began, self.progress())
                time.sleep(min(0.2, max(0.0, deadline - now)))
