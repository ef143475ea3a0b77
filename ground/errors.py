"""One root exception and one subclass per area.

The CLI turns any :class:`StagebenchError` into a one-line ``ERROR: …`` and a
non-zero exit; anything else is a bug and keeps its traceback.
"""


class StagebenchError(Exception):
    """Root of every error a user can cause or fix."""

    exit_code = 1


class ConfigError(StagebenchError):
    """Invalid configuration: unknown key, wrong type, value out of range."""

    exit_code = 2


class FileError(StagebenchError):
    """A file that cannot be read as text (missing, a directory, unreadable, not UTF-8) or
    written (a read-only, unwritable or full directory): the message names it and why."""

    exit_code = 2


class JavaError(StagebenchError):
    """No usable Java runtime (Kafka and Spark need Java 17 or later)."""


class ResolveError(StagebenchError):
    """Maven artifacts could not be resolved or downloaded."""


class BrokerError(StagebenchError):
    """The Kafka broker could not be started, reached or stopped."""


class TopicError(StagebenchError):
    """A benchmark topic is missing or violates the one-clock rule (docs/method.md#clock)."""


class EngineError(StagebenchError):
    """A stream engine's job could not start, or it failed."""


class PublishError(StagebenchError):
    """The publisher could not deliver its workload."""


class EvaluationError(StagebenchError):
    """A run's outputs could not be evaluated, or its summary could not be read back."""


class HistoryError(StagebenchError):
    """The history of runs (the results directory's index) could not be read or written."""
