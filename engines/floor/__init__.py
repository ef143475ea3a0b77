"""The floor: a minimal Kafka consume→produce loop in Python (confluent-kafka), the
round trip every engine's ingest pays too (:mod:`engines.floor.loop`)."""

from engines.base import Engine, Support

ENGINE: Engine[None] = Engine(
    name="floor",
    title="the floor",
    stages={"floor": Support()},
    job="engines.floor.loop",
)
