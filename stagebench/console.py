"""Progress for people: numbered steps, a live status line, warnings.

Everything goes to stderr so stdout stays for results. On a terminal the
status line is redrawn in place; otherwise (CI, pipes) it is printed at most
every few seconds so logs stay readable.
"""

import sys
import time

PLAIN_STATUS_EVERY_S = 5.0


class Console:
    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._last_plain = 0.0
        self._status_shown = False

    def _clock(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        return f"[{elapsed // 60:02d}:{elapsed % 60:02d}]"

    def _clear(self) -> None:
        if self._status_shown:
            self.stream.write("\r\033[K")
            self._status_shown = False

    def step(self, message: str) -> None:
        self._clear()
        print(f"{self._clock()} {message}", file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        self._clear()
        print(f"{self._clock()} WARNING: {message}", file=self.stream, flush=True)

    def status(self, message: str) -> None:
        if self.tty:
            self.stream.write(f"\r\033[K{self._clock()} {message}")
            self.stream.flush()
            self._status_shown = True
        elif time.monotonic() - self._last_plain >= PLAIN_STATUS_EVERY_S:
            self._last_plain = time.monotonic()
            print(f"{self._clock()} {message}", file=self.stream, flush=True)
