"""The jars PySpark ships in ``pyspark/jars``: its Spark, Hadoop, Scala and Ivy.

stagebench runs Ivy from there, compiles against Hadoop and Scala from there, and
leaves out of the Kafka connector's class path every library found there, so that a
library is never on the class path in two versions.
"""

from pathlib import Path


def directory() -> Path:
    """``pyspark/jars`` of the installed PySpark."""
    # imported here: settings that name a class compiled against these jars are read by
    # commands that start no Spark, and importing PySpark takes a fifth of a second
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def find(artifact: str) -> Path | None:
    """The jar of ``artifact`` (``ivy``, ``hadoop-client-api``) that PySpark ships, the
    last by name if there are several; None if it ships none."""
    found = sorted(directory().glob(f"{artifact}-[0-9]*.jar"))
    return found[-1] if found else None
