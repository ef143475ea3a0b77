"""The engine contract (:mod:`engines.base`): every engine's record names modules that
keep it, and a toy engine registered here, with a fault and an execution mode of its
own, is taken by the bench as it is, the bench asking it what differs (no Kafka)."""

import ast
import importlib.util
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from engines import registry
from engines.base import PROCESSING_TIME, Engine, PartLoss, Support
from engines.config import EngineSettings, PipelineConfig
from evaluator.comparison.rows import variant
from ground.errors import ConfigError
from stagebench.config.faults import partial, process
from stagebench.config.settings import RunConfig
from stagebench.run.faults import FaultInjector
from stagebench.run.job import Job
from stagebench.suite.entry import entries, parts


def _source(module: str) -> ast.Module:
    """The module's syntax tree, read without running it (nor the runtime it loads)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return ast.parse(Path(spec.origin).read_text())


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def _runs_as_main(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)


@pytest.mark.parametrize("name", registry.NAMES)
def test_every_engine_names_modules_that_keep_the_contract(name):
    found = registry.engine(name)
    job = _source(found.job)
    # run is handed to engines.process.main, which mypy checks against JobFunction
    assert _defines(job, "run") and _runs_as_main(job), found.job
    assert "process.main(run" in ast.unparse(job), found.job
    if found.session is not None:
        assert _runs_as_main(_source(found.session)), found.session
    if found.smoke is not None:
        assert _defines(_source(found.smoke), "read_back"), found.smoke
    assert found.settings is None or issubclass(found.settings, EngineSettings)
    assert found.install is None or found.settings is not None
    for mode in found.drain_pause_s:
        assert any(mode in support.triggers for support in found.stages.values()), mode


def test_an_engine_naming_a_module_that_is_not_there_is_refused(monkeypatch):
    _register(monkeypatch, Engine(name="toy", title="the toy", stages={"ingest": Support()},
                                  job="engines.toy_job_gone"))  # fmt: skip
    with pytest.raises(ConfigError, match=r"names the module 'engines\.toy_job_gone'"):
        registry.engine("toy")


LOCKSTEP = "lockstep"
"""The toy engine's own execution mode."""


@pytest.fixture
def victim() -> Iterator[subprocess.Popen]:
    """A process standing for a part of the toy's job (a gear), for its fault to kill."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def picked() -> list[tuple[int | None, str | None]]:
    """What the toy's fault was given to pick its process from."""
    return []


@pytest.fixture
def toy(monkeypatch, victim, picked) -> Engine:
    """The toy engine, registered for this test only: the floor's loop under another name,
    with a fault (``gear-loss``, whose process it picks) and a mode of its own."""

    def pick(pid: int | None, ready: str | None) -> int:
        picked.append((pid, ready))
        return victim.pid

    found = Engine(
        name="toy", title="the toy",
        stages={"ingest": Support(triggers=(PROCESSING_TIME, LOCKSTEP)), "parse": Support()},
        job="engines.floor.loop",
        losses=(PartLoss("gear-loss", "gear", pick, partial=True),),
        drain_pause_s={LOCKSTEP: 0.0},
    )  # fmt: skip
    _register(monkeypatch, found)
    return found


def _register(monkeypatch, found: Engine) -> None:
    package = types.ModuleType(f"engines.{found.name}")
    package.ENGINE = found  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, f"engines.{found.name}", package)
    monkeypatch.setattr(registry, "NAMES", (*registry.NAMES, found.name))
    registry.engine.cache_clear()


@pytest.fixture(autouse=True)
def _forget_engines() -> Iterator[None]:
    yield
    registry.engine.cache_clear()


def test_a_toy_engines_fault_and_mode_pass_the_benchs_checks(toy):
    run = RunConfig(stage="ingest", engine="toy", fault="gear-loss")
    assert run.runs_on() is toy and "gear-loss" in registry.faults()
    with pytest.raises(ConfigError, match="Spark takes none of that kind"):
        RunConfig(stage="ingest", engine="spark", fault="gear-loss")
    with pytest.raises(ConfigError, match=r"fault must be one of .*gear-loss"):
        RunConfig(stage="ingest", engine="toy", fault="gear-slip")
    pipeline = PipelineConfig(
        stage="ingest", engine="toy", trigger=LOCKSTEP, output_topic="out", run_id="r",
        bootstrap="host:1", checkpoint_dir="c",
    )  # fmt: skip
    assert pipeline.trigger == LOCKSTEP
    with pytest.raises(ConfigError, match=r"toy's lockstep mode does not support stage 'parse'"):
        PipelineConfig(stage="parse", engine="toy", trigger=LOCKSTEP, output_topic="out",
                       run_id="r", bootstrap="host:1", checkpoint_dir="c")  # fmt: skip
    # a suite takes the mode as an entry of its own, and its table keeps it apart
    [(key, impl)] = entries("toy:ingest@lockstep", "builtin")
    assert parts(key) == ("toy", "ingest", LOCKSTEP) and impl == "builtin"
    with pytest.raises(ConfigError, match=r"the toy's lockstep mode cannot run stage 'parse'"):
        entries("toy:parse@lockstep", "builtin")
    assert variant("builtin", LOCKSTEP) == "builtin@lockstep"
    assert variant("builtin", PROCESSING_TIME) == variant("builtin", None) == "builtin"


def test_a_toy_engines_fault_kills_the_process_the_engine_picks(toy, victim, picked):
    assert process("gear-loss", toy) == "engine" and partial("gear-loss", toy)
    marks = iter([1_000, 2_000])
    steps: list[str] = []
    job = SimpleNamespace(engine=toy, pid=4242, ready_text="app-7")
    injector = FaultInjector(
        SimpleNamespace(fault="gear-loss"), SimpleNamespace(step=steps.append), job,
        SimpleNamespace(), SimpleNamespace(mark=lambda *a, **k: next(marks)),
        lambda seconds, what: None, None,
    )  # fmt: skip
    injector.inject()
    assert victim.wait(10) == -9  # SIGKILL
    assert picked == [(4242, "app-7")]
    [fault] = injector.faults
    assert (fault["kind"], fault["gear_pid"]) == ("gear-loss", victim.pid)
    assert f"fault: killed gear {victim.pid} (SIGKILL)" in steps
    [window] = injector.windows()
    assert (window.process, window.partial) == ("engine", True)


def test_a_toy_engines_mode_drains_after_the_pause_it_asks_for(toy, tmp_path):
    pipeline = PipelineConfig(
        stage="ingest", engine="toy", trigger=LOCKSTEP, output_topic="out", run_id="r",
        bootstrap="host:1", checkpoint_dir=str(tmp_path / "c"),
    )  # fmt: skip
    began = time.monotonic()
    # no progress events at all: only the engine's pause tells the job has drained
    assert Job(tmp_path, pipeline).drain(30, lambda: None)
    assert time.monotonic() - began < 5
