"""Every environment variable stagebench reads, in one place; an engine names its own
(:attr:`engines.base.Engine.environment`)."""

BOOTSTRAP = "STAGEBENCH_BOOTSTRAP"
"""Bootstrap servers of an existing Kafka; overrides the embedded broker."""

HOME = "STAGEBENCH_HOME"
"""Directory of the embedded broker's state (default: the user state dir)."""

CACHE_DIR = "STAGEBENCH_CACHE_DIR"
"""Directory of resolved jars (default: ~/.cache/stagebench)."""

MAVEN_REPOSITORY = "STAGEBENCH_MAVEN_REPOSITORY"
"""A Maven repository (a mirror of Maven Central, an internal proxy) the embedded broker's
pinned jars are downloaded from (default: Maven Central); each is still checked against
its pinned SHA-1."""

KAFKA_PROPERTIES = "STAGEBENCH_KAFKA_PROPERTIES"
"""A Kafka client properties file (TLS, SASL; the Java client's names) every client of a
run takes (:mod:`ground.kafka.client`)."""

JAVA_HOME = "JAVA_HOME"
"""Java runtime used for the broker (default: ``java`` on PATH)."""

TEST_BOOTSTRAP = "KAFKA_BOOTSTRAP_SERVERS"
"""Test fixtures use this Kafka instead of starting one."""

KAFKA_IMAGE = "STAGEBENCH_KAFKA_IMAGE"
"""Kafka image of docker-compose.yml and of the tests' containers (an apache/kafka layout)."""

TEST_DOCKER = "STAGEBENCH_TEST_DOCKER"
"""``required``: a test marked ``docker`` fails, not skips, where Docker or its image is missing."""

TEST_BROWSER = "STAGEBENCH_TEST_BROWSER"
"""``required``: a test marked ``browser`` fails, not skips, where Chromium or its driver is
missing."""
