"""How to run a point of the history again: the commit to check out and the command, with
the settings its user set, so a step can be bisected."""

import shlex

from stagebench.config.layers import SET, option_name
from stagebench.history.entry import Entry, Figure
from stagebench.history.series import NOT_COMPARED

SKIPPED = {"run.engine", *NOT_COMPARED}
"""Key settings the command does not repeat: the engine has its option already, and a
broker's address is the machine's (:data:`NOT_COMPARED`)."""


def command(entry: Entry, figure: Figure) -> str:
    """``stagebench run`` with the stage, engine, implementation, workload, rate and every
    setting the user set (a suite's stage is run alone)."""
    impl, _, trigger = figure.impl.partition("@")
    parts = ["stagebench", "run", "--stage", figure.stage]
    if figure.engine:
        parts += ["--engine", figure.engine]
    parts += ["--impl", impl]
    if entry.workload:
        parts += ["--workload", entry.workload]
    if entry.rate is not None:
        parts += ["--rate", f"{entry.rate:g}"]
    settings = dict(entry.key_settings)
    if trigger:
        settings["pipeline.trigger"] = trigger
    for name, value in sorted(settings.items()):
        section, _, key = name.rpartition(".")
        if name in SKIPPED:
            continue
        if section == "run":
            parts += [option_name(key), value]
        else:
            parts += [SET, f"{name}={value}"]
    return shlex.join(parts)


def checkout(entry: Entry) -> str:
    """The git command that returns to the point's commit, or why there is none."""
    if not entry.commit:
        return "# no commit recorded"
    commit, dirty = entry.commit.removesuffix("-dirty"), entry.commit.endswith("-dirty")
    return f"git checkout {commit}" + ("  # had uncommitted changes" if dirty else "")
