"""The statistics, pure functions on numbers: exact percentiles and per-second series
(:mod:`~evaluator.statistics.stats`), their intervals (:mod:`~evaluator.statistics.confidence`),
the tests that judge a difference (:mod:`~evaluator.statistics.significance`) and whether a
series is steady (:mod:`~evaluator.statistics.steady`).
"""
