"""Evaluator: per-record latency from broker timestamps, completeness, statistics, reports.

The entry points::

    evaluator.evaluation.evaluate(bootstrap, run, config, out_dir) -> Summary  # summary.json
    evaluator.run_info.RunInfo, load_run, save_run     # what a run directory says
    evaluator.config.EvaluatorConfig
    evaluator.summary_file.load_summary(run_dir) -> Summary  # summary.json, version checked
    evaluator.comparison.compare.compare(run_dirs) -> Comparison  # stage table of runs

It reads only Kafka topics and run directories and imports nothing of the other
roles: a run measured by any pipeline can be evaluated (docs/method.md#latency).
"""
