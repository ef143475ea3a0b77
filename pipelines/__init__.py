"""The Spark pipelines whose per-stage latency stagebench measures (docs/method.md#stages).

``config`` (PipelineConfig) → ``source`` (Kafka in) → ``transforms`` / ``custom`` (the
ladder ingest → parse → join → tumbling → sliding) → ``sink`` (Kafka out), run by
``job`` (configured through ``process``) with ``progress`` recording engine events;
``floor`` is the ladder's rung without Spark. ``schema`` gives the message fields their
Spark types, from :mod:`ground.contract`.
"""
