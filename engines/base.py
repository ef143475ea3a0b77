"""What a stream engine provides: the contract every engine of :mod:`engines` keeps.

An engine is a subpackage of :mod:`engines` whose ``__init__`` defines ``ENGINE``, an
:class:`Engine`, and imports nothing heavy (the engine's runtime loads only in its job's
process). The bench knows an engine only through this record and
:mod:`engines.registry`:

- **which stages it runs** (:attr:`Engine.stages`), each with its implementations and
  its execution modes, and what else it needs told apart (a JIT to warm up, the faults
  of its own process it can take, a session a suite's runs can share);
- **its job**: a module run as ``python -m <job> --config RUN_DIR/pipeline.json
  --run-dir RUN_DIR [--parent-watch] [--resume]`` (:func:`engines.process.main`), whose
  ``run(config, run_dir, max_seconds, stop, resume)`` (:data:`engines.process.Job`)
  runs until ``stop``. While it runs it touches ``ready`` once it processes inputs and
  appends its progress events to ``engine_progress.jsonl`` (one JSON object a line:
  ``{"event": "progress", "time_ms", "numInputRows"}`` at least every few seconds, or
  ``{"event": "idle", "time_ms"}``; a ``{"event": "started"}`` as soon as it reads, when
  that is long before it is ready), so the bench waits for it and tells when it has
  drained (:mod:`ground.rundir` names the files).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ground.errors import ConfigError

Impl = Literal["builtin", "custom"]
IMPLS: Final[tuple[Impl, ...]] = ("builtin", "custom")
"""A stage's implementations: the engine's own operators, or its state and timers written
out by hand (Spark: transformWithStateInPandas)."""


def impl_named(name: str) -> Impl:
    """The implementation called ``name``; ConfigError for another name."""
    for impl in IMPLS:
        if impl == name:
            return impl
    raise ConfigError(f"impl must be one of {', '.join(IMPLS)}, got {name!r}")


PROCESSING_TIME = "processing-time"
"""The execution mode every engine has: its own loop or micro-batches."""


@dataclass(frozen=True)
class Support:
    """How an engine runs one stage: its implementations (the first is the default) and
    its execution modes (the first is the default)."""

    impls: tuple[Impl, ...] = ("builtin",)
    triggers: tuple[str, ...] = (PROCESSING_TIME,)


@dataclass(frozen=True)
class Engine:
    """One stream engine, as the bench sees it (see the module)."""

    name: str
    title: str
    """The name in sentences ("Spark", "the floor")."""
    stages: Mapping[str, Support]
    """The stages it runs, by name, in ladder order."""
    job: str
    """The module of its job process (see the module)."""
    warms_up: bool = False
    """Its JIT needs a warm-up before the measured period (a JVM engine)."""
    faults: tuple[str, ...] = ()
    """The faults of its own process it can take (``engine-restart``, ``worker-loss``)."""
    session: str | None = None
    """The module of a session a suite's or a capacity search's runs can share (Spark's
    application, ``engines.spark.server``), run as ``python -m <session> --app-dir DIR``
    with ``DIR/application.json`` (:meth:`engines.config.Settings.session_conf`, which
    also says which runs it takes); None: every run has a job of its own."""
    settings: type | None = None
    """Its settings' class (a :class:`engines.config.Settings`); None: it has none."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Why an execution mode leaves stages out, by mode, for the error that refuses one."""
    versions: Callable[[], Mapping[str, str | None]] = dict
    """The versions of what its latency depends on, by name, for every result (called in
    a run: it may load the engine's runtime)."""
    event_clock: Literal["least", "greatest"] | None = None
    """How its windows' event-time clock combines the input topics: "least" (a watermark:
    a window closes once every topic has passed its end), "greatest" (either topic, as
    Kafka Streams' stream time); the evaluator splits a window's latency at the input
    that closed it (evaluator.closing). None: it runs no window."""
    carries_inputs: bool = True
    """Its outputs carry their inputs' broker times and count (``input_ts_latest``,
    ``input_ts_earliest``, ``input_count``), which the evaluator checks. False (a user's
    job): an output may leave them out, and the evaluator takes them from the inputs it
    names (docs/own-pipeline.md)."""
    install: Callable[[Any], None] | None = None
    """Installs what its job needs that is not there yet, saying what it downloads (first
    use only), given the engine's settings: called by the bench before it starts the job,
    so an install is neither the job's start-up nor counted against its ready timeout;
    None: nothing to install."""
    release: tuple[str, str] | None = None
    """The key of :attr:`versions` that names its release, and how a sentence names it
    (Spark's: its Python package's key and name): the line under a doc's measured figures;
    None: none."""
    smoke: str | None = None
    """A module whose ``read_back(bootstrap, topic, master)`` reads a topic back through
    the engine and returns ``(timestamps, version)``: each record's (timestamp type as
    confluent-kafka numbers it, epoch ms), and the engine's version
    (``stagebench smoke``); None: the engine has no such check."""

    @property
    def whose(self) -> str:
        """The title as an owner ("Spark's", "Kafka Streams'")."""
        return self.title + ("'" if self.title.endswith("s") else "'s")

    def runs(self, stage: str) -> bool:
        return stage in self.stages

    def impls(self, stage: str) -> tuple[Impl, ...]:
        """The stage's implementations; ConfigError when the engine does not run it."""
        return self._support(stage).impls

    def triggers(self, stage: str) -> tuple[str, ...]:
        """The stage's execution modes; ConfigError when the engine does not run it."""
        return self._support(stage).triggers

    def check(self, stage: str, impl: str, trigger: str = PROCESSING_TIME) -> None:
        """ConfigError unless the engine runs ``stage`` as ``impl`` in ``trigger`` mode."""
        support = self._support(stage)
        if impl_named(impl) not in support.impls:
            has = [name for name, s in self.stages.items() if impl in s.impls]
            if not has:
                raise ConfigError(f"{self.title} has no {impl} implementation (stage {stage!r})")
            raise ConfigError(f"impl {impl!r} exists only for {has}, not for stage {stage!r}")
        if trigger not in support.triggers:
            has = [name for name, s in self.stages.items() if trigger in s.triggers]
            why = self.notes.get(trigger)
            if not has:
                raise ConfigError(f"{self.title} has no {trigger} mode (stage {stage!r})")
            raise ConfigError(
                f"{self.whose} {trigger} mode does not support stage {stage!r} with impl "
                f"{impl!r}: only {', '.join(has)}" + (f" ({why})" if why else "")
            )

    def _support(self, stage: str) -> Support:
        try:
            return self.stages[stage]
        except KeyError:
            raise ConfigError(
                f"{self.name} does not run stage {stage!r} (it runs: {', '.join(self.stages)})"
            ) from None
