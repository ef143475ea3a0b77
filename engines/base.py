"""What a stream engine provides: the contract every engine of :mod:`engines` keeps.

An engine is a subpackage of :mod:`engines` whose ``__init__`` defines ``ENGINE``, an
:class:`Engine`, and imports nothing heavy (the engine's runtime loads only in its job's
process). The bench knows an engine only through this record and
:mod:`engines.registry`, and asks it whatever differs between engines:

- **which stages it runs** (:attr:`Engine.stages`), each with its implementations and
  its execution modes, and what else it needs told apart (a JIT to warm up, the faults
  of its own processes it can take and which process each kills (:class:`PartLoss`), how
  long a mode's last records need, a session a suite's runs can share, its environment
  variables);
- **its settings** (:attr:`Engine.settings`, a class of
  :class:`engines.config.EngineSettings`) and what it installs given them
  (:attr:`Engine.install`, checked against that class by mypy);
- **its job**: a module run as ``python -m <job> --config RUN_DIR/pipeline.json
  --run-dir RUN_DIR [--parent-watch] [--resume]`` (:func:`engines.process.main`), whose
  ``run(config, run_dir, max_seconds, stop, resume)`` (:data:`engines.process.JobFunction`)
  runs until ``stop``. While it runs it touches ``ready`` once it processes inputs and
  appends its progress events to ``engine_progress.jsonl`` (one JSON object a line:
  ``{"event": "progress", "time_ms", "numInputRows"}`` at least every few seconds, or
  ``{"event": "idle", "time_ms"}``; a ``{"event": "started"}`` as soon as it reads, when
  that is long before it is ready), so the bench waits for it and tells when it has
  drained (:mod:`ground.rundir` names the files). The registry checks that the job's,
  the session's and the smoke test's modules exist when it finds the engine, without
  loading them.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Generic, Literal, Protocol, TypeVar

from ground.errors import ConfigError
from ground.stages import PROCESSING_TIME

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


@dataclass(frozen=True)
class Support:
    """How an engine runs one stage: its implementations (the first is the default) and
    its execution modes (the first is the default)."""

    impls: tuple[Impl, ...] = ("builtin",)
    triggers: tuple[str, ...] = (PROCESSING_TIME,)


class ReadBack(Protocol):
    """An engine's smoke test (:attr:`Engine.smoke`): ``read_back(bootstrap, topic,
    master)`` reads ``topic`` back through the engine and returns each record's (timestamp
    type as confluent-kafka numbers it, epoch ms) and the engine's version."""

    def __call__(
        self, bootstrap: str, topic: str, master: str
    ) -> tuple[list[tuple[int, int]], str]: ...


@dataclass(frozen=True)
class PartLoss:
    """A fault that kills one process of an engine's job (SIGKILL) while the job lives
    on: the engine picks the process, the bench kills it and measures the recovery."""

    name: str
    """The fault's name, as ``--fault`` gives it (``worker-loss``)."""
    part: str
    """What the killed process is ("executor", "instance"): the progress line's word and
    the result's key ``<part>_pid``."""
    pick: Callable[[int | None, str | None], int]
    """The pid to kill, given the job's pid (None: not started) and what its ready file
    holds (Spark: the application id); EngineError when it has none to lose."""
    partial: bool = False
    """The rest of the job writes on while the part is replaced (one instance of several,
    :class:`evaluator.recovery.windows.Window`); False: outputs wait for it."""
    sampled: bool = True
    """The killed process is one the run's resource sampler counts as the engine's (a
    child of the job); False: another starts it (a cluster's worker, Spark's executor)."""


S = TypeVar("S")
"""An engine's settings class (an :class:`engines.config.EngineSettings`)."""


@dataclass(frozen=True)
class Engine(Generic[S]):
    """One stream engine, as the bench sees it (see the module)."""

    name: str
    title: str
    """The name in sentences ("Spark", "the floor")."""
    stages: Mapping[str, Support]
    """The stages it runs, by name, in ladder order."""
    job: str
    """The module of its job process (see the module)."""
    warmup_min_s: float = 0.0
    """The shortest auto warm-up of its job in a process of its own (``[run]
    warmup_min_s`` unless set): how long its latency took to settle from a cold process
    in its own measurement (``benchmarks/warmup_settle.py``; its docs page gives the
    figures); 0: nothing of it compiles late (the floor)."""
    restarts: bool = False
    """It takes ``engine-restart``: its job killed whole and started again from its
    checkpoint, as a supervisor would."""
    losses: tuple[PartLoss, ...] = ()
    """The faults of a part of its job it takes (Spark: ``worker-loss``)."""
    drain_pause_s: Mapping[str, float] = field(default_factory=dict)
    """Execution modes whose progress events do not tell when the job has drained, by
    mode, with the pause that lets the last records through instead (Spark's real-time
    mode reports only at its checkpoint interval; its latency is milliseconds)."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """The environment variables it reads, by name, with what each does (the bench's own
    are in :mod:`ground.envvars`)."""
    session: str | None = None
    """The module of a session a suite's or a capacity search's runs can share (Spark's
    application, ``engines.spark.server``), run as ``python -m <session> --app-dir DIR``
    with ``DIR/application.json`` (:meth:`engines.config.EngineSettings.session_conf`, which
    also says which runs it takes); None: every run has a job of its own."""
    settings: type[S] | None = None
    """Its settings' class (an :class:`engines.config.EngineSettings`); None: it has none."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Why an execution mode leaves stages out, by mode, for the error that refuses one."""
    versions: Callable[[], Mapping[str, str | None]] = dict
    """The versions of what its latency depends on, by name, for every result (called in
    a run: it may load the engine's runtime)."""
    event_clock: Literal["least", "greatest"] | None = None
    """How its windows' event-time clock combines the input topics: "least" (a watermark:
    a window closes once every topic has passed its end), "greatest" (either topic, as
    Kafka Streams' stream time); the evaluator splits a window's latency at the input
    that closed it (evaluator.latencies.closing). None: it runs no window."""
    carries_inputs: bool = True
    """Its outputs carry their inputs' broker times and count (``input_ts_latest``,
    ``input_ts_earliest``, ``input_count``), which the evaluator checks. False (a user's
    job): an output may leave them out, and the evaluator takes them from the inputs it
    names (docs/own-pipeline.md)."""
    install: Callable[[S], None] | None = None
    """Installs what its job needs that is not there yet, saying what it downloads (first
    use only), given the engine's settings: called by the bench before it starts the job,
    so an install is neither the job's start-up nor counted against its ready timeout;
    None: nothing to install."""
    release: tuple[str, str] | None = None
    """The key of :attr:`versions` that names its release, and how a sentence names it
    (Spark's: its Python package's key and name): the line under a doc's measured figures;
    None: none."""
    smoke: str | None = None
    """A module whose ``read_back`` is a :class:`ReadBack` (``stagebench smoke``); None:
    the engine has no such check."""

    @property
    def faults(self) -> tuple[str, ...]:
        """The faults of its own processes it takes, by name."""
        return ("engine-restart",) * self.restarts + tuple(loss.name for loss in self.losses)

    def loss(self, fault: str) -> PartLoss | None:
        """The part of the job ``fault`` kills; None for a fault of no part of its job."""
        return next((loss for loss in self.losses if loss.name == fault), None)

    def modules(self) -> tuple[str, ...]:
        """The modules it names: its job's, its session's and its smoke test's."""
        return tuple(m for m in (self.job, self.session, self.smoke) if m is not None)

    @property
    def warms_up(self) -> bool:
        """Its job needs a warm-up before the measured period (a JIT compiles late)."""
        return self.warmup_min_s > 0

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
