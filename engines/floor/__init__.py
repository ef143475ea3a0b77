"""The floor: a minimal Kafka consume→produce loop in Python (confluent-kafka), the
round trip every engine's ingest pays too (:mod:`engines.floor.loop`)."""

from engines.base import Engine, Support

ENGINE = Engine(
    name="floor",
    title="the floor",
    does="a minimal Kafka consumer and producer in Python, copying every record",
    stages={"floor": Support()},
    job="engines.floor.loop",
)
