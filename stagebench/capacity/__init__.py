"""Sustainable throughput: the highest constant rate a stage keeps up with.

A capacity search (:mod:`.measure`) runs constant-rate probes, each a complete run
(:func:`stagebench.run.root.execute`), and judges each one from its summary
(:func:`.probe.judge`). :func:`.search.search` grows the rate geometrically from the
first probe until one is not sustainable, bisects the bracket until its width is within
the precision, then spends its last probes at the current estimate of the capacity.
Every probe is one observation, a pass or a failure, whatever its verdict: near
capacity a rate passes some of the time, and :func:`.fit.fit_pass` fits the probability
of passing against the rate over all of them, which gives the capacity (the rate passed half the
time) with a 95 % interval. A probe the publisher could not feed is repeated
and, twice, ends the search (the bottleneck is then the load generator, not the
stage); the budget or Ctrl-C end it with the probes so far.
"""
