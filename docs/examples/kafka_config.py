"""The Kafka client settings of a job stagebench starts, for confluent-kafka: the broker
stagebench names and, on a secured cluster, the properties file ``STAGEBENCH_KAFKA_PROPERTIES``
names (docs/your-kafka.md#tls-and-sasl), translated from the Java client's names to
librdkafka's. Like the jobs beside it, it uses no stagebench module.
"""

import functools
import os
import re
import sys

SAME = ("security.protocol", "sasl.mechanism", "ssl.endpoint.identification.algorithm")
"""Properties librdkafka takes under the Java client's name."""


def java_properties(text: str) -> dict[str, str]:
    """The ``key=value`` lines of a properties file (``#`` and ``!`` start a comment)."""
    lines = re.sub(r"\\\n\s*", "", text).splitlines()
    pairs = (re.split(r"\s*[=:]\s*", line.strip(), maxsplit=1) for line in lines)
    return {pair[0]: pair[1] for pair in pairs if len(pair) == 2 and pair[0][0] not in "#!"}


def librdkafka(java: dict[str, str]) -> dict[str, str]:
    """``java``'s settings in librdkafka's names: the SASL PLAIN or SCRAM user and password
    from ``sasl.jaas.config``, a PEM trust store as ``ssl.ca.location``."""
    out = {key: value for key, value in java.items() if key in SAME}
    options = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', java.get("sasl.jaas.config", "")))
    if "username" in options:
        out["sasl.username"], out["sasl.password"] = options["username"], options["password"]
    if "ssl.truststore.location" in java:
        out["ssl.ca.location"] = java["ssl.truststore.location"]
    return out


@functools.cache
def secured() -> dict[str, str]:
    """The secured cluster's settings, {} where the variable is unset; their names, never
    their values, go to standard error (the run's pipeline.log)."""
    path = os.environ.get("STAGEBENCH_KAFKA_PROPERTIES")
    if not path:
        return {}
    with open(path, encoding="utf-8") as file:
        found = librdkafka(java_properties(file.read()))
    print(f"Kafka client settings from {path}: {', '.join(sorted(found))}", file=sys.stderr)
    return found


def client(**settings: object) -> dict[str, object]:
    """``settings`` with the run's broker and the secured cluster's settings."""
    return {"bootstrap.servers": os.environ["STAGEBENCH_BOOTSTRAP"], **settings, **secured()}
