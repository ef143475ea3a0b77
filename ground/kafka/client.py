"""The Kafka client settings of a secured cluster (TLS, SASL), from one properties file.

The file is the one Kafka's own tools take (``--command-config client.properties``), in
the Java client's names, named by ``STAGEBENCH_KAFKA_PROPERTIES``; every process of a run
inherits the variable. The engines' Java clients take its properties as they are
(:func:`java_properties`); stagebench's own clients (librdkafka: the publisher, the
evaluator, the topics, the floor) take them translated (:func:`librdkafka`), and a
property they have no counterpart for is refused by name, before anything starts.

A value that can carry a secret is written nowhere: wherever a property is recorded (an
engine's configuration in the run directory) it is :data:`REDACTED` (:func:`redacted`),
and a child process that needs it gets it through its environment or a private file.
"""

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ground import envvars, files
from ground.errors import ConfigError

SAME = (
    "security.protocol",
    "sasl.mechanism",
    "ssl.endpoint.identification.algorithm",
    "client.dns.lookup",
)
"""Properties librdkafka takes under the Java client's name."""
_JAAS = re.compile(
    r"^\s*org\.apache\.kafka\.common\.security\.(plain\.PlainLoginModule|scram\.ScramLoginModule)"
    r"\s+required(?P<options>.*);\s*$",
    re.S,
)
_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
REDACTED = "<redacted>"
"""What a secret property's value is written as."""
_SECRET = re.compile(
    r"jaas|password|secret|token|credential|private|user\.info|(^|\.)ssl\.key", re.IGNORECASE
)


def properties_file() -> Path | None:
    """The file ``STAGEBENCH_KAFKA_PROPERTIES`` names; None when unset."""
    given = os.environ.get(envvars.KAFKA_PROPERTIES, "").strip()
    return Path(given) if given else None


def java_properties() -> dict[str, str]:
    """The file's properties, as the engines' Java clients take them; {} when unset."""
    path = properties_file()
    if path is None:
        return {}
    return parse(files.read_text(path, f"{envvars.KAFKA_PROPERTIES}:"), str(path))


def redacted(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with the value of each that can carry a secret as :data:`REDACTED`,
    under any prefix (``producer.``, Flink's ``properties.``): a JAAS configuration (it
    holds the password), any password, key store or key (``ssl.key*``), secret, token,
    credential, private key or user info."""
    return {key: REDACTED if _SECRET.search(key) else v for key, v in properties.items()}


def parse(text: str, where: str) -> dict[str, str]:
    """``key=value`` lines (``:`` also separates, ``#`` and ``!`` start a comment, a
    trailing backslash continues a line), as java.util.Properties reads them."""
    out: dict[str, str] = {}
    logical = re.sub(r"\\\n\s*", "", text)
    for number, line in enumerate(logical.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        found = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", stripped)
        if found is None:
            raise ConfigError(f"{where} line {number}: expected key=value, got {stripped!r}")
        out[found[1]] = found[2]
    return out


def librdkafka(java: dict[str, str] | None = None) -> dict[str, str]:
    """The properties (``java``, else the file's) in librdkafka's names: SASL PLAIN and
    SCRAM credentials from ``sasl.jaas.config``, a PEM trust store as ``ssl.ca.location``;
    ConfigError naming a property librdkafka has no counterpart for."""
    given = java_properties() if java is None else java
    out = {key: value for key, value in given.items() if key in SAME}
    if jaas := given.get("sasl.jaas.config"):
        found = _JAAS.match(jaas)
        options = dict(_OPTION.findall(found["options"])) if found else {}
        if not found or not {"username", "password"} <= options.keys():
            raise ConfigError(
                "sasl.jaas.config: stagebench's own clients take the PlainLoginModule or "
                'ScramLoginModule with username="…" password="…" only'
            )
        out["sasl.username"], out["sasl.password"] = options["username"], options["password"]
    if location := given.get("ssl.truststore.location"):
        if given.get("ssl.truststore.type", "").upper() != "PEM":
            raise ConfigError(
                "ssl.truststore.location: stagebench's own clients read a PEM file only; "
                "set ssl.truststore.type=PEM (Kafka's Java clients read PEM too)"
            )
        out["ssl.ca.location"] = location
    known = {*SAME, "sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.type"}
    if unknown := sorted(set(given) - known):
        raise ConfigError(
            f"{envvars.KAFKA_PROPERTIES}: stagebench's own clients cannot take "
            f"{', '.join(unknown)} (they take {', '.join(sorted(known))})"
        )
    return out


def settings(base: Mapping[str, object]) -> dict[str, Any]:
    """A librdkafka client's settings ``base`` with the cluster's (:func:`librdkafka`)."""
    return {**base, **librdkafka()}
