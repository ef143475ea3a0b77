"""The Spark pipelines whose per-stage latency stagebench measures (docs/method.md#stages).

``config`` (PipelineConfig) → ``source`` (Kafka in) → ``stages`` / ``custom`` (the
ladder ingest → parse → join → tumbling → sliding) → ``sink`` (Kafka out), run by
``job`` with ``progress`` recording engine events; ``cli`` adds ``stagebench pipeline``.
"""
