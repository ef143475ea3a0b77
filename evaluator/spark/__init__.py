"""The evaluation as a Spark batch job, for runs too big for one process's memory.

Same definitions as the pandas engine, expressed with Spark DataFrames over the
Kafka batch source, in modules that mirror the pandas ones: :mod:`.reader` fixes
the end offsets once before reading (so every Spark action sees the same
records) and parses values as :mod:`evaluator.reader` does; :mod:`.expected`
computes the outputs the inputs imply, as :mod:`evaluator.expected`; each output
is joined by its identity to its expected output, its latency is its Kafka
``timestamp`` minus the broker timestamps of those inputs, and its carried fields
and values are checked as :mod:`evaluator.checks` does (:mod:`.checks`).
Percentiles use Spark's exact ``percentile`` (linear interpolation, as numpy's
default), so both engines give identical statistics (:mod:`.stats`). Only small
results (the counts, the statistics, the per-second series, a few examples of
wrong fields) come back to the driver; latencies.parquet is written by Spark.

:mod:`evaluator.evaluation` imports this package only when a run is evaluated
with ``engine = "spark"``, so a pandas evaluation never loads pyspark.
"""
