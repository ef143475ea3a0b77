"""The stream engines whose per-stage latency stagebench measures, side by side
(docs/method.md#stages).

:mod:`engines.base` states what an engine provides, :mod:`engines.registry` finds one by
name; each engine is a subpackage of its own (:mod:`engines.floor`, the ladder's rung
without an engine: a plain Kafka loop; :mod:`engines.spark`, Spark Structured
Streaming), and none imports another. What they share: the job's configuration
(:mod:`engines.config`) and the job process's side of the hand-off from a run
(:mod:`engines.process`).
"""
