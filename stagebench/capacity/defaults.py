"""What a capacity probe runs unless told otherwise: its ``[run]`` and ``[evaluator]``
defaults. Apart from :mod:`stagebench.capacity.search` so that the command line can state
them in ``--help`` without loading the search's numerics."""

PROBE_DURATION_S = 30.0
PROBE_WARMUP_MAX_S = 60.0
PROBE_SETTLE_WINDOW_S = 15.0
"""A probe's measured period, longest warm-up and settle window unless given (the
warm-up ends after three settled windows in a row, 45 s, within the longest): an
overloaded probe never settles, so its warm-up would otherwise last the longest warm-up of
a latency run (``warmup_max_s``)."""
PROBE_LEAD_IN_S = 30.0
"""A probe first publishes half its rate this long, then warms up at the rate. A cold job
at the full rate builds a start-up backlog: above capacity its latency was still
falling after a minute (draining that backlog with ever larger micro-batches), and near
capacity whether it caught up by the measured period was chance. After the lead-in a
rate above capacity shows its latency rising."""
PROBE_DEFAULTS: dict[str, float] = {
    "duration_s": PROBE_DURATION_S,
    "lead_in_s": PROBE_LEAD_IN_S,
    "warmup_max_s": PROBE_WARMUP_MAX_S,
    "warmup_min_s": 0.0,  # the lead-in warmed the job up: at the rate, the settle window is enough
    "settle_window_s": PROBE_SETTLE_WINDOW_S,
}
"""A probe's ``[run]`` values unless the config file or the command line give them."""
PROBE_APPLICATION = "per-run"
"""Each probe a Spark job of its own unless ``[run] application`` says shared. Probes in
one warmed-up application agreed with a job of its own warmed up for 300 s at half a
capacity (built-in tumbling at 6 000 msg/s on a 2-core VM: p50 3 336 against 3 086 ms,
where a probe in a job of its own gave 5 518). At 12 000 msg/s, that stage's edge, the
two have disagreed both ways: once the shared application sustained the rate (p50 8.3 s)
where jobs of their own warmed up for 300 s did not (17.8 and 19.2 s, catching up a
backlog), and its search put the capacity at 14 265 msg/s against 6 515 with a job per
probe; back to back on a steady host, a warmed-up job sustained it (8.1 s) and the
application did not (9.9 s, rising). Shared stays opt-in until that is settled."""
PROBE_EVALUATOR_DEFAULTS: dict[str, float] = {"read_before_s": 10.0}
"""A probe's ``[evaluator]`` values unless given: ingest and parse probes read their topics
from 10 s before the measured period (:func:`evaluator.run_topics.read_from_ms`). Reading
every record of a probe took 11.3 of a 26.1-minute parse search and 3.7 of the 6.0
minutes of an ingest probe at 96,000 msg/s; the verdict needs only the measured period."""
