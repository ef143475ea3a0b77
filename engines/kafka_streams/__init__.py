"""Kafka Streams 4.x: the ladder as one Kafka Streams topology in a JVM of its own.

``java/`` is the job (``stagebench.kstreams.Main``: the stages as a topology, its ready file
and progress events), compiled at first use by ``build``, which also resolves its pinned
jars (``jars.txt``, ``rocksdb.txt``, ``ecj.txt``); ``job`` is the job process that starts the
JVM and stops it; ``settings`` is the table ``[engine.kafka-streams]`` and the Kafka Streams
properties it makes. Importing this package starts no JVM.
"""

from engines.base import Engine, PartLoss, Support
from engines.kafka_streams.instances import pick_instance
from engines.kafka_streams.settings import KafkaStreamsSettings


def _versions() -> dict[str, str | None]:
    """The pinned Kafka Streams release."""
    from engines.kafka_streams.build import version

    return {"kafka_streams": version()}


def _install(settings: KafkaStreamsSettings) -> None:
    """The job's jars (with RocksDB's if its stores are) and its compiled classes."""
    from engines.kafka_streams.build import job_classpath

    job_classpath(settings.state_store)


ENGINE = Engine(
    name="kafka-streams",
    title="Kafka Streams",
    stages={
        "ingest": Support(),
        "parse": Support(),
        "join": Support(),
        "tumbling": Support(impls=("builtin", "custom")),
        "tumbling-union": Support(),
        "sliding": Support(impls=("builtin", "custom")),
    },
    job="engines.kafka_streams.job",
    warmup_min_s=30.0,
    restarts=True,
    losses=(PartLoss("instance-loss", "instance", pick_instance, partial=True),),
    settings=KafkaStreamsSettings,
    versions=_versions,
    install=_install,
    event_clock="greatest",
    release=("kafka_streams", "Kafka Streams"),
)
