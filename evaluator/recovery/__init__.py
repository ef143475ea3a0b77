"""Recovery after a disturbance: how long latency stays inflated after a burst or a fault
(docs/method.md#recovery). :mod:`~evaluator.recovery.windows` judges each disturbance
window of a run's per-second series; :mod:`~evaluator.recovery.section` makes
summary.json's section of them and what its readers show: a comparison row's figures,
sentences and warnings.
"""
