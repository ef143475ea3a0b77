"""Resolving Maven artifacts with PySpark's Ivy: the Kafka connector's jars."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engines.spark.ivy import ivy_module, not_published, parse_coordinate
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


WANTED = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0"
NOT_FOUND = "\n".join(
    [
        ":: resolving dependencies :: stagebench#resolve;working@host",
        ":: problems summary ::",
        ":::: WARNINGS",
        "\t\tmodule not found: org.apache.spark#spark-sql-kafka-0-10_2.13;4.3.0",
        "\t==== central: tried",
        "\t  https://repository.example/maven2/org/apache/spark/spark-sql-kafka-0-10_2.13/4.3.0/"
        "spark-sql-kafka-0-10_2.13-4.3.0.pom",
        "\t\t::          UNRESOLVED DEPENDENCIES         ::",
        "\t\t:: org.apache.spark#spark-sql-kafka-0-10_2.13;4.3.0: not found",
        "",
    ]
)


@pytest.mark.parametrize(
    ("output", "definite"),
    [
        (NOT_FOUND, True),
        # Ivy reports an unreachable repository's module "not found" too
        (NOT_FOUND + ":::: ERRORS\n\tServer access error at url https://repository.example/maven2/"
         " (java.net.ConnectException: Connection refused)\n", False),
        (NOT_FOUND + "\t\tHost repository.example not found. url=https://repository.example/\n",
         False),
        (NOT_FOUND + "\t\tYour proxy requires authentication.\n", False),
        (NOT_FOUND + "\tSERVER ERROR: Bad Gateway url=https://repository.example/\n", False),
        # a dependency of it missing: the module itself may well exist
        (NOT_FOUND.replace("spark-sql-kafka-0-10_2.13;4.3.0: not", "commons-pool2;2.12.1: not"),
         False),
        ("Exception in thread main java.lang.OutOfMemoryError", False),
    ],
)  # fmt: skip
def test_only_a_certain_not_found_says_the_connector_is_not_published(output, definite):
    assert not_published(output, WANTED) is definite
