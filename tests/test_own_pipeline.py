"""docs/own-pipeline.md's worked example: its commands, exactly as the page gives them,
measure docs/examples/parse_job.py on a real broker."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "own-pipeline.md"

pytestmark = pytest.mark.integration


def example_commands() -> str:
    section = PAGE.read_text().split("## Without stagebench starting your job", 1)[1]
    (block,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    return block


def test_the_page_s_worked_example_measures_the_example_job(kafka_bootstrap, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "examples").symlink_to(ROOT / "docs" / "examples")
    bin_dir = Path(sys.executable).parent
    env = os.environ | {
        "STAGEBENCH_BOOTSTRAP": kafka_bootstrap,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", example_commands()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    printed = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(printed[-1])
    assert result["stage"] == "parse" and result["outputs"] > 0
    assert result["missing"] == 0 and result["duplicates"] == 0
    summary = json.loads((tmp_path / "results" / "my-parse" / "summary.json").read_text())
    assert summary["trusted"] is True, summary["warnings"]
