"""The Flink runtime's first install, with the real one (a venv and pip install, about
830 MB) replaced by a stand-in that takes a second."""

import concurrent.futures
import threading
import time
from pathlib import Path

from engines.flink import runtime
from ground import envvars


def test_two_first_installs_at_once_both_succeed(tmp_path, monkeypatch, capsys):
    """Two runs' first use of Flink at the same time: one installs, the other waits for it
    and then uses it, instead of deleting the environment being made."""
    monkeypatch.setenv(envvars.CACHE_DIR, str(tmp_path))
    steps: list[str] = []

    def install_step(cmd: list[str], what: str) -> None:
        steps.append(what)
        if "venv" in cmd:
            interpreter = Path(cmd[-1]) / "bin" / "python"
            interpreter.parent.mkdir(parents=True)
            interpreter.write_text("")
        time.sleep(0.5)

    monkeypatch.setattr(runtime, "_run", install_step)
    barrier = threading.Barrier(2)

    def first_use(_: int) -> Path:
        barrier.wait()
        return runtime.python()

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        found = list(pool.map(first_use, range(2)))
    assert found == [runtime.home() / "bin" / "python"] * 2 and found[0].exists()
    assert steps == [
        "create the Flink environment",
        f"pip install apache-flink=={runtime.FLINK_VERSION}",
    ]
    err = capsys.readouterr().err
    assert err.count("Installing apache-flink") == 1
    assert err.count(f"Waiting for another process that installs {runtime.home()}...") == 1
    assert (runtime.home() / "complete").exists()
