"""A stage of the ladder as your own job: a plain confluent-kafka loop that stagebench
measures as the stage it claims (docs/own-pipeline.md#a-stage-of-the-ladder):

    stagebench run --job 'python docs/examples/stage_job.py' --stage join

It runs the stage ``STAGEBENCH_STAGE`` names (ingest, parse, join, tumbling,
tumbling-union or sliding) and writes in each output that stage's identity and values
only; stagebench takes from the input topics what an output need not carry (the times
and count of its inputs), except in tumbling-union, whose updates say how many inputs
they carry. It uses no stagebench module: confluent-kafka, the variables stagebench
sets and ``kafka_config.py`` beside it.
"""

import json
import os
import signal
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Message, Producer
from kafka_config import client

SECOND = 1000
Output = dict[str, Any]
Step = Callable[[Message, dict | None], list[Output]]


def observation(msg: Message) -> dict | None:
    """The input's observation; None when it is no JSON object with exactly one of speed
    and flow (a malformed input: parse and the later stages drop it)."""
    try:
        value = json.loads(msg.value())
    except ValueError:
        return None
    if not isinstance(value, dict) or ("speed" in value) == ("flow" in value):
        return None
    return value


def named(msg: Message) -> Output:
    """The identity of ingest's and parse's outputs: the input they came from."""
    return {"source_topic": msg.topic(), "source_partition": msg.partition(),
            "source_offset": msg.offset()}  # fmt: skip


def ingest(msg: Message, value: dict | None) -> list[Output]:
    return [named(msg)]  # every record, malformed ones too


def parse(msg: Message, value: dict | None) -> list[Output]:
    if value is None:
        return []
    kind = "speed" if "speed" in value else "flow"
    return [{**named(msg), kind: value[kind]}]


class Join:
    """Speed and flow of one location, lane and observation time, once both have come."""

    def __init__(self) -> None:
        self.waiting: dict[tuple, dict[str, dict]] = {}

    def __call__(self, msg: Message, value: dict | None) -> list[Output]:
        if value is None:
            return []
        key = (value["location_id"], value["lane"], value["observation_ts"])
        twins = self.waiting.setdefault(key, {})
        twins.setdefault("speed" if "speed" in value else "flow", value)
        if len(twins) < 2:
            return []
        del self.waiting[key]
        speed, flow = twins["speed"], twins["flow"]
        return [{"location_id": key[0], "lane": key[1], "observation_ts": key[2],
                 "speed": speed["speed"], "flow": flow["flow"],
                 "num_lanes": max(speed["num_lanes"], flow["num_lanes"])}]  # fmt: skip


class Clock:
    """The event time every input topic has passed: the least of each topic's newest
    observation time. A topic of one partition arrives in observation-time order, so a
    window that ends at or before it has all its inputs."""

    def __init__(self) -> None:
        self.newest: dict[str, int] = {}
        self.topics = os.environ["STAGEBENCH_INPUT_TOPICS"].split(",")

    def passed(self, msg: Message, value: dict) -> int | None:
        topic = msg.topic()
        self.newest[topic] = max(self.newest.get(topic, 0), value["observation_ts"])
        if len(self.newest) < len(self.topics):
            return None
        return min(self.newest.values())


class Tumbling:
    """A 1 s window of the join's outputs per location, written once the clock passed
    its end: the flows' sum, the speeds' mean, the lanes seen."""

    def __init__(self) -> None:
        self.join, self.clock = Join(), Clock()
        self.open: dict[tuple[str, int], list[Output]] = {}

    def __call__(self, msg: Message, value: dict | None) -> list[Output]:
        if value is None:
            return []
        for pair in self.join(msg, value):
            start = pair["observation_ts"] // SECOND * SECOND
            self.open.setdefault((pair["location_id"], start), []).append(pair)
        now = self.clock.passed(msg, value)
        closed = sorted(k for k in self.open if now is not None and k[1] + SECOND <= now)
        return [self.window(key, self.open.pop(key)) for key in closed]

    @staticmethod
    def window(key: tuple[str, int], pairs: list[Output]) -> Output:
        speeds = [p["speed"] for p in pairs]
        return {"location_id": key[0], "window_start": key[1],
                "flow_sum": sum(p["flow"] for p in pairs),
                "speed_avg": sum(speeds) / len(speeds),
                "lanes_seen": len({p["lane"] for p in pairs}),
                "num_lanes": max(p["num_lanes"] for p in pairs)}  # fmt: skip


def change(now: float, then: float | None) -> float | None:
    """(now − then) / then; None (null) without a result then, or when it is 0."""
    return None if not then else (now - then) / then


class Sliding:
    """A 3 s window sliding by 1 s over the tumbling windows, one per tumbling window
    (its last second): that second's flow sum and mean speed, and their change against
    the second 1 s and 2 s before it."""

    def __init__(self) -> None:
        self.tumbling = Tumbling()
        self.seen: dict[tuple[str, int], Output] = {}

    def __call__(self, msg: Message, value: dict | None) -> list[Output]:
        outputs = []
        for last in self.tumbling(msg, value):
            location, start = last["location_id"], last["window_start"]
            self.seen[(location, start)] = last
            self.seen.pop((location, start - 3 * SECOND), None)  # older than 2 s back
            before = [self.seen.get((location, start - k * SECOND), {}) for k in (1, 2)]
            outputs.append({
                "location_id": location, "window_start": start + SECOND - 3 * SECOND,
                "flow_sum": last["flow_sum"], "speed_avg": last["speed_avg"],
                "flow_change_short": change(last["flow_sum"], before[0].get("flow_sum")),
                "flow_change_long": change(last["flow_sum"], before[1].get("flow_sum")),
                "speed_change_short": change(last["speed_avg"], before[0].get("speed_avg")),
                "speed_change_long": change(last["speed_avg"], before[1].get("speed_avg")),
            })  # fmt: skip
        return outputs


class TumblingUnion:
    """The 1 s window per location over both topics' inputs, without the join, written
    at every input with how many inputs it carries and their broker times (an update)."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.open: dict[tuple[str, int], dict] = {}

    def __call__(self, msg: Message, value: dict | None) -> list[Output]:
        if value is None:
            return []
        key = (value["location_id"], value["observation_ts"] // SECOND * SECOND)
        window = self.open.setdefault(key, {"speed": [], "flow": [], "lanes": set(),
                                            "num_lanes": 0, "times": []})  # fmt: skip
        kind = "speed" if "speed" in value else "flow"
        window[kind].append(value[kind])
        window["lanes"].add(value["lane"])
        window["num_lanes"] = max(window["num_lanes"], value["num_lanes"])
        window["times"].append(msg.timestamp()[1])  # the input's LogAppendTime
        update = {
            "location_id": key[0], "window_start": key[1],
            "flow_sum": sum(window["flow"]) if window["flow"] else None,
            "speed_avg": sum(window["speed"]) / len(window["speed"]) if window["speed"] else None,
            "lanes_seen": len(window["lanes"]), "num_lanes": window["num_lanes"],
            "input_ts_latest": max(window["times"]), "input_ts_earliest": min(window["times"]),
            "input_count": len(window["times"]),
        }  # fmt: skip
        now = self.clock.passed(msg, value)
        for done in [k for k in self.open if now is not None and k[1] + SECOND <= now]:
            del self.open[done]  # no input of it can come any more
        return [update]


STEPS: dict[str, Callable[[], Step]] = {
    "ingest": lambda: ingest, "parse": lambda: parse, "join": Join, "tumbling": Tumbling,
    "tumbling-union": TumblingUnion, "sliding": Sliding,
}  # fmt: skip


def main() -> None:
    step = STEPS[os.environ["STAGEBENCH_STAGE"]]()
    consumer = Consumer(client(**{
        "group.id": "stage-job-" + os.environ["STAGEBENCH_RUN_ID"],
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
        for result in step(msg, observation(msg)):
            producer.produce(output, json.dumps(result).encode())
        producer.poll(0)
    producer.flush(10)
    consumer.close()


if __name__ == "__main__":
    main()
