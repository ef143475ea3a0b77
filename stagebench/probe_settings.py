"""What a capacity probe runs unless told otherwise: its ``[run]`` and ``[evaluator]``
defaults. Apart from :mod:`stagebench.capacity` so that the command line can state them
in ``--help`` without loading the search's numerics."""

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
PROBE_EVALUATOR_DEFAULTS: dict[str, float] = {"read_before_s": 10.0}
"""A probe's ``[evaluator]`` values unless given: ingest and parse probes read their topics
from 10 s before the measured period (:func:`evaluator.run_topics.read_from_ms`). Reading
every record of a probe took 11.3 of a 26.1-minute parse search and 3.7 of the 6.0
minutes of an ingest probe at 96,000 msg/s; the verdict needs only the measured period."""
