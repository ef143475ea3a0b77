"""The outputs judged against the inputs: what each stage's outputs must be
(:mod:`~evaluator.outputs.expected`), what they carry checked (:mod:`~evaluator.outputs.checks`),
whether they are all there once (:mod:`~evaluator.outputs.completeness`), and a user's own
job's outputs (:mod:`~evaluator.outputs.own_job`).
"""
