"""Apache Flink 2.2 (PyFlink, Flink SQL with the Kafka SQL connector): the ladder as SQL.

``statements`` builds the stages as Flink SQL from a pipeline's configuration (pure
functions); ``job`` is the run's job process: it writes the statements into the run
directory, starts ``runner`` (which imports only PyFlink) with the Python of the Flink
runtime, a virtual environment of its own that ``runtime`` installs on first use (its
pins conflict with stagebench's), and writes progress events from the source's
committed offsets. ``settings`` is the table ``[engine.flink]``. Importing this package
loads no Flink.
"""

from engines.base import Engine, Support
from engines.flink.runtime import CONNECTOR_PINS, FLINK_VERSION
from engines.flink.settings import FlinkSettings


def _versions() -> dict[str, str | None]:
    """apache-flink's and its Kafka SQL connector's (both pinned)."""
    from ground.jvm.maven import read_pins

    return {
        "apache-flink": FLINK_VERSION,
        "flink_kafka_connector": read_pins(CONNECTOR_PINS)[0].version,
    }


def _install(settings: FlinkSettings) -> None:
    """The Flink runtime and the Kafka SQL connector."""
    from engines.flink import runtime

    runtime.python()
    runtime.connector_jars()


ENGINE = Engine(
    name="flink",
    title="Flink",
    stages={
        "ingest": Support(),
        "parse": Support(),
        "join": Support(),
        "tumbling": Support(),
        "tumbling-union": Support(),
        "sliding": Support(),
    },
    job="engines.flink.job",
    warmup_min_s=60.0,
    restarts=True,
    settings=FlinkSettings,
    versions=_versions,
    install=_install,
    event_clock="least",
    release=("apache-flink", "Apache Flink"),
)
