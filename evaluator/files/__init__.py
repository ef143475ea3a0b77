"""What an evaluation writes: a run's files (:mod:`~evaluator.files.report`: summary.json,
latencies.parquet, timeseries.csv, report.md; :mod:`~evaluator.files.hdrlog`: latencies.hlog)
and the docs' schema pages generated from the model (:mod:`~evaluator.files.result_schema`).
"""
