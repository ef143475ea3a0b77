"""docs/examples/site-workflow.yml, the CI recipe of docs/results.md, parses as a GitHub
Actions workflow: scheduled, the suite, the results kept on a branch, the gate, the site
published to Pages, and every stagebench command in it one the parser takes."""

import shlex
from pathlib import Path

import yaml

from stagebench.cli import build_parser

WORKFLOW = Path(__file__).parents[1] / "docs" / "examples" / "site-workflow.yml"


def _commands(steps: list[dict]) -> list[list[str]]:
    """Every ``.venv/bin/stagebench …`` command the steps run, as arguments."""
    out = []
    for step in steps:
        for line in step.get("run", "").replace("\\\n", " ").splitlines():
            words = shlex.split(line.split("||")[0], comments=True)
            if words and words[0] == ".venv/bin/stagebench":
                out.append(words[1:])
    return out


def test_the_ci_recipe_is_a_workflow_whose_commands_stagebench_takes():
    doc = yaml.safe_load(WORKFLOW.read_text())
    assert doc["on"]["schedule"][0]["cron"] and "workflow_dispatch" in doc["on"]
    assert doc["permissions"]["pages"] == "write"
    [job] = doc["jobs"].values()
    uses = {step.get("uses", "").split("@")[0] for step in job["steps"]}
    assert {"actions/checkout", "actions/upload-pages-artifact", "actions/deploy-pages"} <= uses
    commands = _commands(job["steps"])
    assert [c[0] for c in commands] == ["suite", "history", "site"]
    assert "--steps" in commands[1]
    parser = build_parser()
    for command in commands:
        parser.parse_args(command)  # an unknown option exits 2
    assert any("stagebench-results" in step.get("run", "") for step in job["steps"])
