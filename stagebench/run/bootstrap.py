"""Which Kafka the bench uses (docs/kafka.md#which-kafka): the one the user names
(:func:`ground.kafka.resolve.named`), else a running embedded broker, else the embedded
broker, started here. Starting a broker is the bench's decision, never the ground
package's; every command that needs Kafka, and a run's composition root
(:mod:`stagebench.run.root`), resolves it here.
"""

import sys

from ground.kafka.broker import EmbeddedBroker
from ground.kafka.resolve import named


def resolve(explicit: str | None = None) -> str:
    """A reachable bootstrap address; starts the embedded broker when none is given."""
    if given := named(explicit):
        return given
    broker = EmbeddedBroker()
    if state := broker.status():
        return state.bootstrap
    print(
        "No Kafka given (--bootstrap / STAGEBENCH_BOOTSTRAP): starting the embedded broker",
        file=sys.stderr,
    )
    return broker.start().bootstrap
