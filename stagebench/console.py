"""Progress for people: numbered steps, progress bars and warnings, through rich.

Everything goes to stderr so stdout stays for results. On a terminal a task
shows a live bar with its rate and the time left; elsewhere (CI, pipes) it is a
plain line at most every few seconds, so logs stay readable.
"""

import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console as RichConsole
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

PLAIN_EVERY_S = 5.0

Update = Callable[[float, str], None]
"""``update(done, detail)``: how far a task is (in its own unit) and a short status text."""


class Console:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.rich = RichConsole(file=self.stream, highlight=False, soft_wrap=True)
        self.started = time.monotonic()

    def _clock(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        return f"[{elapsed // 60:02d}:{elapsed % 60:02d}]"

    def step(self, message: str) -> None:
        self.rich.print(f"[dim]{escape(self._clock())}[/dim] {escape(message)}")

    def warn(self, message: str) -> None:
        self.rich.print(
            f"[dim]{escape(self._clock())}[/dim] [bold yellow]WARNING:[/bold yellow] "
            f"{escape(message)}"
        )

    @contextmanager
    def task(self, what: str, total: float | None = None) -> Iterator[Update]:
        """A task of ``total`` units (seconds, messages; None: unknown) with a live display."""
        if not self.rich.is_terminal:
            yield self._plain(what, total)
            return
        columns = [
            TextColumn("[dim]{task.fields[clock]}[/dim] {task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[detail]}"),
        ]
        with Progress(*columns, console=self.rich, transient=True) as progress:
            task = progress.add_task(escape(what), total=total, clock=self._clock(), detail="")

            def update(done: float, detail: str = "") -> None:
                progress.update(task, completed=done, detail=escape(detail), clock=self._clock())

            yield update

    def _plain(self, what: str, total: float | None) -> Update:
        last = -math.inf

        def update(done: float, detail: str = "") -> None:
            nonlocal last
            if time.monotonic() - last < PLAIN_EVERY_S:
                return
            last = time.monotonic()
            of = f"/{total:g}" if total is not None and math.isfinite(total) else ""
            print(f"{self._clock()} {what} {done:.0f}{of} {detail}".rstrip(), file=self.stream,
                  flush=True)  # fmt: skip

        return update
