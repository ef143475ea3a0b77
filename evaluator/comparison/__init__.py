"""Comparisons of evaluated runs, read from their summary.json files.

- :mod:`.rows`: one run as a row (stage, percentiles, intervals, caveats);
- :mod:`.compare`: the stage table, a :class:`~.result.ComparisonRow` per (stage,
  implementation) with its increment over the stage below (:mod:`.increments` judges
  them), written as comparison.json's ``stages``; :mod:`.table` renders it as text;
- :mod:`.ab`: two groups of runs (A/B) and the regression check on them;
- :mod:`.differences`: what differs between runs' settings besides stage and
  implementation (light: the history imports it without numpy).
"""
