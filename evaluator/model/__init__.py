"""The result model: a run's :class:`~evaluator.model.result.Summary` and its records
(:mod:`~evaluator.model.result`, written down by :mod:`~evaluator.model.record`), the run's own
run.json (:mod:`~evaluator.model.run_info`), summary.json read back, its version checked
(:mod:`~evaluator.model.summary_file`), and the throughput section
(:mod:`~evaluator.model.throughput`).
"""
