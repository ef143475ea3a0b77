"""Evaluator: per-record latency from broker timestamps, completeness, statistics, reports.

The entry points::

    evaluator.evaluation.evaluate(bootstrap, run, config, out_dir) -> Summary  # summary.json
    evaluator.model.run_info.RunInfo, load_run, save_run     # what a run directory says
    evaluator.config.EvaluatorConfig
    evaluator.model.summary_file.load_summary(run_dir) -> Summary  # summary.json, version checked
    evaluator.comparison.compare.compare(run_dirs) -> Comparison  # stage table of runs

At the root, its configuration (:mod:`~evaluator.config`) and the evaluation
(:mod:`~evaluator.evaluation`) with its steps: read the run's topics
(:mod:`~evaluator.run_topics`), measure them (:mod:`~evaluator.measure`), build the summary
(:mod:`~evaluator.summary`). Below them, one subpackage per concern, each importing only
those before it: the statistics (``statistics``), reading a topic (``topics``), the outputs
judged against the inputs (``outputs``), the latencies (``latencies``), how figures and
warnings read (``text``), recovery after a disturbance (``recovery``), the result model
(``model``), runs compared (``comparison``) and the files written (``files``).

It reads only Kafka topics and run directories and imports nothing of the other
roles: a run measured by any pipeline can be evaluated (docs/method.md#latency).
"""
