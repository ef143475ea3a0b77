"""A results directory's documents read back: summary.json (:mod:`evaluator.model.summary_file`),
comparison.json and capacity.json (:mod:`.documents`), each refused in one line when it
is of a schema version this stagebench does not read."""
