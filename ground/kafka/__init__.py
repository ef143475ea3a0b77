"""Kafka as stagebench uses it: the Kafka the user names (:mod:`.resolve`), the embedded
KRaft broker (:mod:`.broker`), topics that obey the one-clock rule (:mod:`.topics`,
:mod:`.naming`), and the broker's clock (:mod:`.clock`)."""

KAFKA_VERSION = "4.3.1"
"""Apache Kafka release the embedded broker and the Kafka tools are resolved at."""
DEFAULT_KAFKA_IMAGE = f"apache/kafka:{KAFKA_VERSION}"
"""The official image of that release: docker-compose.yml's and the tests' default."""
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""Largest record the benchmark topics and stagebench's producers take: the faulty-event
workload's 1 MiB value, and ingest's output that embeds it, with room to spare (Kafka's
defaults stop at about 1 MB)."""
MAX_BROKERS = 5
"""Most nodes of an embedded cluster (each is a JVM beside Spark on the same machine)."""
