"""What the evaluator says in words: how every table shows a number
(:mod:`~evaluator.text.number_format`) and its warnings (:mod:`~evaluator.text.caveats`).
"""
