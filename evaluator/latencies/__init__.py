"""The latencies measured on the broker clock: each output's (:mod:`~evaluator.latencies.latency`,
with the measured period), from the intended send time (:mod:`~evaluator.latencies.intended`),
a window's split at its closing input (:mod:`~evaluator.latencies.closing`), an update-mode
window's (:mod:`~evaluator.latencies.updates`), the inputs' lateness in event time
(:mod:`~evaluator.latencies.lateness`) and catching up with a backlog
(:mod:`~evaluator.latencies.catchup`).
"""
