"""Which Kafka to use: the one the user names, else the embedded broker.

Order (docs/kafka.md#which-kafka): ``--bootstrap`` / ``STAGEBENCH_BOOTSTRAP`` if given,
else a running embedded broker, else start one. Docker users start
``docker-compose.yml`` themselves and pass its address.
"""

import os
import sys

from ground import envvars
from ground.errors import BrokerError
from ground.kafka.broker import EmbeddedBroker
from ground.kafka.node import wait_until_reachable

REACH_TIMEOUT_S = 10.0


def resolve(explicit: str | None = None) -> str:
    """A reachable bootstrap address; starts the embedded broker when none is given."""
    given = explicit or os.environ.get(envvars.BOOTSTRAP)
    if given:
        ensure_reachable(given)
        return given
    broker = EmbeddedBroker()
    if state := broker.status():
        return state.bootstrap
    print(
        "No Kafka given (--bootstrap / STAGEBENCH_BOOTSTRAP): starting the embedded broker",
        file=sys.stderr,
    )
    return broker.start().bootstrap


def ensure_reachable(bootstrap: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    try:
        wait_until_reachable(bootstrap, timeout_s, secured=True)
    except BrokerError as err:
        last = str(err).rpartition(" (")[2].rstrip(")")
        raise BrokerError(
            f"cannot reach Kafka at {bootstrap} within {timeout_s:.0f} s: is it running, "
            f"and is the address right? (last error: {last})"
        ) from err
