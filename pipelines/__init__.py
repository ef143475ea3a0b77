"""The Spark pipelines whose per-stage latency stagebench measures (SPEC §3).

``config`` (PipelineConfig) → ``source`` (Kafka in) → ``stages`` / ``custom`` (the
ladder ingest → parse → join → tumbling → sliding) → ``sink`` (Kafka out), run by
``job`` with ``progress`` recording engine events; ``cli`` adds ``stagebench pipeline``.
"""
