"""A plain Python consumer–producer, measured by stagebench as your own job.

It passes the speed observations through and drops the flow ones (a filter), and names
in each output the input it came from, which is all stagebench needs:

    stagebench run --job 'python docs/examples/python_job.py'

It uses no stagebench module: only confluent-kafka, the variables stagebench sets and
``kafka_config.py`` beside it (the settings of a secured cluster).
"""

import json
import os
import signal

from confluent_kafka import Consumer, Producer
from kafka_config import client

consumer = Consumer(client(**{
    "group.id": "python-job-" + os.environ["STAGEBENCH_RUN_ID"],
    "auto.offset.reset": "earliest",
    "fetch.wait.max.ms": 5,
}))  # fmt: skip
consumer.subscribe(os.environ["STAGEBENCH_INPUT_TOPICS"].split(","))
producer = Producer(client(**{"linger.ms": 0}))
output = os.environ["STAGEBENCH_OUTPUT_TOPIC"]

stopping = []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
while not stopping:
    msg = consumer.poll(0.1)
    if msg is None or msg.error():
        continue
    try:
        value = json.loads(msg.value())
    except ValueError:
        continue
    if not isinstance(value, dict) or value.get("speed") is None:
        continue  # the filter: flow observations (and anything else) are dropped
    result = {
        "location_id": value.get("location_id"),
        "speed": value["speed"],
        # the contract: the input this output was computed from last
        "source_topic": msg.topic(),
        "source_partition": msg.partition(),
        "source_offset": msg.offset(),
    }
    producer.produce(output, json.dumps(result).encode())
    producer.poll(0)
producer.flush(10)
consumer.close()
