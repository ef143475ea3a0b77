"""The run's publisher, in a thread of the bench's process beside the job: started by the
run flow (:mod:`stagebench.run.runner`), stopped once the tail is over; its failure is kept
for the main thread, whose health check raises it, and its progress is shown live."""

import threading
from collections.abc import Callable

from ground.errors import PublishError, StagebenchError
from publisher.config import PublisherConfig
from publisher.producer import publish
from publisher.source import Source
from publisher.summary import ProgressSnapshot, PublishSummary


class PublisherThread:
    """One run's publisher: its thread, its stop signal, its latest progress, and how it
    ended (a summary or an error)."""

    def __init__(
        self, bootstrap: str, config: PublisherConfig, source: Source | None = None
    ) -> None:
        """``source``: what to publish, a replay file's read and checked already (default:
        :func:`publisher.producer.publish`'s)."""
        self.bootstrap, self.config, self.source = bootstrap, config, source
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.summary: PublishSummary | None = None
        self.error: StagebenchError | None = None
        self.progress: ProgressSnapshot | None = None

    def start(self) -> None:
        def work() -> None:
            try:
                self.summary = publish(
                    self.bootstrap, self.config, self.stopping, progress, self.source
                )
            except StagebenchError as err:  # reported by the main thread
                self.error = err
            except Exception as err:
                self.error = PublishError(f"the publisher failed: {err!r}")

        def progress(snap: ProgressSnapshot) -> None:
            self.progress = snap

        self.thread = threading.Thread(target=work, name="publisher", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()

    def progress_line(self) -> str:
        """The publisher's latest progress, for the display."""
        snap = self.progress
        if snap is None:
            return ""
        return (
            f"sent {snap.sent:,}  {snap.rate:,.0f} msg/s  lag {snap.lag_ms:.1f} ms"
            + ("  BEHIND SCHEDULE" if snap.behind else "")
            + (f"  delivery errors {snap.delivery_errors}" if snap.delivery_errors else "")
        )

    def join(self, check_health: Callable[[], None], warn: Callable[[str], None]) -> None:
        """Wait for the stopped publisher, checking the run's health meanwhile; raise its
        error, and ``warn`` of what makes the offered load untrustworthy."""
        assert self.thread is not None
        while self.thread.is_alive():
            check_health()
            self.thread.join(0.5)
        if err := self.error:
            raise err
        summary = self.result
        if not summary.ok:
            warn(
                f"publisher: {summary.delivery_errors} delivery errors, "
                f"{summary.undelivered} undelivered ({'; '.join(summary.first_errors)})"
            )
        if summary.behind:
            lag = summary.send_lag_ms
            warn(
                f"the publisher fell behind its schedule: max send lag {lag['max']:.0f} ms "
                f"(warn above {self.config.behind_warn_ms:g} ms, behind_warn_ms; p99 "
                f"{lag['p99']:.1f} ms): the offered load was lower than asked"
            )

    @property
    def result(self) -> PublishSummary:
        """The summary of a publisher that ended without an error (once joined)."""
        assert self.summary is not None, "the publisher has not ended well"
        return self.summary

    def wait(self, timeout_s: float) -> None:
        """Give a stopped publisher ``timeout_s`` to end (a failed run's may hang)."""
        if self.thread is not None:
            self.thread.join(timeout_s)
