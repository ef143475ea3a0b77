"""stagebench: how much latency each operation of a streaming pipeline adds.

This package is the bench, the top floor: the command line, settings, the flow
of a run, the Spark job's process, suites, resources and metadata. It composes
the three roles (``publisher``, ``engines``, ``evaluator``), which stand on
the ``ground`` package. Every latency is the difference of two LogAppendTime
timestamps stamped by the same Kafka broker (docs/method.md#clock).
"""

__version__ = "0.1.0"
