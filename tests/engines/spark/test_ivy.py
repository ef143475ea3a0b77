"""Resolving Maven artifacts with PySpark's Ivy: the Kafka connector's jars."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engines.spark.ivy import ivy_module, parse_coordinate
from ground.errors import ResolveError


def test_ivy_module_lists_every_coordinate():
    root = ET.fromstring(ivy_module(["org.apache.kafka:kafka_2.13:4.3.1", "g:a:1"]))
    deps = [(d.get("org"), d.get("name"), d.get("rev")) for d in root.iter("dependency")]
    assert deps == [("org.apache.kafka", "kafka_2.13", "4.3.1"), ("g", "a", "1")]


@pytest.mark.parametrize("bad", ["g:a", "g::1", "g:a:1:x", ""])
def test_parse_coordinate_rejects_malformed(bad):
    with pytest.raises(ResolveError):
        parse_coordinate(bad)


@pytest.mark.spark  # resolves the connector with Ivy the first time
def test_the_connector_jars_leave_out_the_libraries_pyspark_ships():
    import pyspark

    from engines.spark.session import _artifact, base_conf, connector_jars

    jars = connector_jars()
    names = {_artifact(jar.name) for jar in jars}
    assert {"spark-sql-kafka-0-10_2.13", "kafka-clients"} <= names
    shipped = {_artifact(j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    # Ivy's resolution brings some of them: spark-tags, scala-library
    assert {"spark-tags_2.13", "scala-library"} <= shipped and not names & shipped
    assert base_conf("local[2]")["spark.jars"].split(",") == [str(jar) for jar in jars]
    assert _artifact("spark-sql-kafka-0-10_2.13-4.2.0.jar") == "spark-sql-kafka-0-10_2.13"
