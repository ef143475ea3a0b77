"""stagebench: how much latency each operation of a streaming pipeline adds.

Every latency is the difference of two LogAppendTime timestamps stamped by the
same Kafka broker (SPEC §1), so no clock skew enters a result.
"""

__version__ = "0.1.0"

KAFKA_VERSION = "4.3.1"
"""Apache Kafka release the embedded broker and the Kafka tools are resolved at."""
