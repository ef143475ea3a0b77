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
at the full rate builds a start-up backlog: above capacity its latency then falls while
it drains that backlog with ever larger micro-batches, and near capacity whether it
catches up by the measured period is chance. After the lead-in a rate above capacity
shows its latency rising (docs/capacity.md#a-probe)."""
PROBE_DEFAULTS: dict[str, float] = {
    "duration_s": PROBE_DURATION_S,
    "lead_in_s": PROBE_LEAD_IN_S,
    "warmup_max_s": PROBE_WARMUP_MAX_S,
    "warmup_min_s": 0.0,  # the lead-in warmed the job up: at the rate, the settle window is enough
    "settle_window_s": PROBE_SETTLE_WINDOW_S,
}
"""A probe's ``[run]`` values unless the config file or the command line give them."""
PROBE_APPLICATION = "per-run"
"""Each probe a Spark job of its own unless ``[run] application`` says shared. Well below
capacity a probe in a warmed-up shared application agrees with a warmed-up job of its
own; at a stage's edge the verdicts of the two disagree both ways, following the host's
speed and what the JVM has compiled, so shared stays opt-in
(docs/capacity.md#a-probe)."""
PROBE_EVALUATOR_DEFAULTS: dict[str, float] = {"read_before_s": 10.0}
"""A probe's ``[evaluator]`` values unless given: ingest and parse probes read their topics
from 10 s before the measured period (:func:`evaluator.run_topics.read_from_ms`): at tens
of thousands of messages a second, reading every record of a probe's lead-in and warm-up
would take much of a search's time, and the verdict needs only the measured period."""
