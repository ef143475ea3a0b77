from pathlib import Path

from engines.spark import pyspark_jars


def test_finds_a_jar_pyspark_ships_and_none_it_does_not():
    ivy = pyspark_jars.find("ivy")
    assert ivy is not None and ivy.parent == pyspark_jars.directory()
    assert ivy.name.startswith("ivy-") and ivy.is_file()
    assert pyspark_jars.find("no-such-artifact") is None


def test_takes_the_artifacts_own_jar_the_last_by_name(tmp_path: Path, monkeypatch):
    for name in (
        "scala-library-2.13.16.jar",
        "scala-library-2.13.17.jar",
        "scala-reflect-2.13.17.jar",
    ):
        (tmp_path / name).touch()
    monkeypatch.setattr(pyspark_jars, "directory", lambda: tmp_path)
    assert pyspark_jars.find("scala-library") == tmp_path / "scala-library-2.13.17.jar"
    assert pyspark_jars.find("scala") is None
