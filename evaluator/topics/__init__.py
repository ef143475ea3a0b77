"""Reading a topic: every partition between offsets fixed at the start
(:mod:`~evaluator.topics.consume`), its JSON values parsed into columns in bulk
(:mod:`~evaluator.topics.reader`), with the fields and types each stage's outputs are read
with (:mod:`~evaluator.topics.output_fields`).
"""
