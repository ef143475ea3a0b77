"""The caches' install lock: two first installs of one cache entry at once."""

import subprocess
import sys
from pathlib import Path

INSTALL = """
import sys, time
from pathlib import Path
from ground.paths import install_lock

target = Path(sys.argv[1])
with install_lock(target):
    if (target / "complete").exists():
        print("reused")
    else:
        target.mkdir()  # an install in progress: a second one here would fail
        time.sleep(1)
        (target / "complete").write_text("done")
        print("installed")
"""


def test_a_second_install_waits_for_the_first_then_uses_it(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "runtime"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", INSTALL, str(target)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _, err in done]
    assert sorted(out.strip() for out, _ in done) == ["installed", "reused"]
    assert (target / "complete").read_text() == "done"
