"""stagebench: how much latency each operation of a streaming pipeline adds.

This package is the bench, the top floor: the command line (``cli``), settings
(``config``), the flow of a run (``run``), suites, capacity searches, the history of
results, reports, the docs' reference data, and the machine's resources. It composes
the three roles (``publisher``, ``engines``, ``evaluator``), which stand on
the ``ground`` package. Every latency is the difference of two LogAppendTime
timestamps stamped by the same Kafka broker (docs/method.md#clock).
"""

__version__ = "0.1.0"
