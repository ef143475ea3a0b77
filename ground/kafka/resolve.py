"""The Kafka the user names, checked before anything uses it.

``--bootstrap``, else ``STAGEBENCH_BOOTSTRAP`` (docs/kafka.md#which-kafka). What to use
when neither is given is the caller's choice: the ground package starts no broker by
itself. Docker users start ``docker-compose.yml`` themselves and pass its address.
"""

import os

from ground import envvars
from ground.errors import BrokerError
from ground.kafka.node import wait_until_reachable

REACH_TIMEOUT_S = 10.0


def named(explicit: str | None = None) -> str | None:
    """The bootstrap address the user names (``explicit``, else the environment's),
    reachable; None when none is named."""
    given = explicit or os.environ.get(envvars.BOOTSTRAP)
    if given:
        ensure_reachable(given)
    return given or None


def ensure_reachable(bootstrap: str, timeout_s: float = REACH_TIMEOUT_S) -> None:
    try:
        wait_until_reachable(bootstrap, timeout_s, secured=True)
    except BrokerError as err:
        last = str(err).rpartition(" (")[2].rstrip(")")
        raise BrokerError(
            f"cannot reach Kafka at {bootstrap} within {timeout_s:.0f} s: is it running, "
            f"and is the address right? (last error: {last})"
        ) from err
