"""Which Kafka connector Spark gets: the installed PySpark's release, the fallback only
after a certain "not found", looked for again a day later (Ivy replaced, no JVM)."""

import os
import time

import pytest

from engines.spark import ivy, session
from ground.errors import ResolveError

OWN = f"{session.CONNECTOR}:4.3.0"
FALLBACK = f"{session.CONNECTOR}:{session.CONNECTOR_FALLBACK}"


@pytest.fixture
def answers(monkeypatch):
    """What the replaced Ivy answers for the PySpark release's own connector, in turn
    (None: found); the calls it got are appended."""
    given: list[Exception | None] = []
    calls: list[list[str]] = []

    def resolve(coordinates):
        calls.append(coordinates)
        if error := given.pop(0):
            raise error
        return []

    monkeypatch.setattr(ivy, "resolve", resolve)
    return given, calls


def _age(path, seconds):
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_certain_not_found_falls_back_says_so_and_looks_again_a_day_later(
    tmp_path, answers, capsys
):
    given, calls = answers
    choice = tmp_path / "connector-for-pyspark-4.3.0"
    given.append(ivy.NotPublished("Ivy could not resolve it: not found"))
    assert session.choose_connector(choice, "4.3.0") == FALLBACK
    said = capsys.readouterr().err
    assert said.startswith("Spark's Kafka connector has no release 4.3.0 on the Maven ")
    assert "using 4.2.0" in said and "looks for 4.3.0 again in a day" in said
    assert "WARNING" not in said
    assert session.choose_connector(choice, "4.3.0") == FALLBACK  # a run within the day
    assert len(calls) == 1
    _age(choice, session.RECHECK_S + 60)
    given.append(None)  # published since
    assert session.choose_connector(choice, "4.3.0") == OWN
    _age(choice, 10 * session.RECHECK_S)
    assert session.choose_connector(choice, "4.3.0") == OWN  # found once: for good
    assert len(calls) == 2 and capsys.readouterr().err == ""


def test_a_network_failure_chooses_nothing(tmp_path, answers, capsys):
    given, calls = answers
    choice = tmp_path / "connector-for-pyspark-4.3.0"
    given.append(ResolveError("Ivy could not resolve it: Server access error"))
    with pytest.raises(ResolveError, match="Server access error"):
        session.choose_connector(choice, "4.3.0")
    assert not choice.exists()
    # a fallback chosen before is kept, and looked past again by the next run
    choice.write_text(FALLBACK + "\n")
    _age(choice, session.RECHECK_S + 60)
    given.append(ResolveError("Ivy could not resolve it: Server access error"))
    assert session.choose_connector(choice, "4.3.0") == FALLBACK
    given.append(None)
    assert session.choose_connector(choice, "4.3.0") == OWN
    assert len(calls) == 3 and capsys.readouterr().err == ""
