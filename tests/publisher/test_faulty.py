"""The faulty-event workload: its malformed values and how they join the stream (no Kafka)."""

import json

import pytest

from ground import contract as s
from ground import malformed as m
from ground.errors import ConfigError
from publisher.codec import encode
from publisher.config import PublisherConfig
from publisher.faulty import OVERSIZED_BYTES, FaultySource, due_malformed, malformed
from publisher.sizing import derive, schedule
from publisher.source import SyntheticSource
from tests.ground.test_malformed import GOOD

SPEED_MESSAGE = GOOD
FLOW_MESSAGE = {**{k: v for k, v in SPEED_MESSAGE.items() if k != s.SPEED}, s.FLOW: 21}


@pytest.mark.parametrize("kind", m.KINDS)
@pytest.mark.parametrize("message", [SPEED_MESSAGE, FLOW_MESSAGE], ids=["speed", "flow"])
def test_every_variant_of_every_kind_is_classified_as_that_kind(kind, message):
    for variant in range(40):
        value = malformed(kind, variant, message)
        assert m.classify(value) == kind, (variant, value[:300])


def test_the_oversized_value_is_one_mebibyte_of_an_otherwise_valid_message():
    value = malformed(m.OVERSIZED, 0, SPEED_MESSAGE)
    assert len(value) == OVERSIZED_BYTES
    assert m.validate_input(json.loads(value)) == []


def test_variants_change_the_field_they_break():
    missing = {
        tuple(sorted(json.loads(malformed(m.MISSING_FIELD, v, SPEED_MESSAGE)))) for v in range(10)
    }
    assert len(missing) == len(s.REQUIRED_FIELDS) + 1
    assert len({malformed(m.TRUNCATED, v, SPEED_MESSAGE) for v in range(5)}) == 5


def test_an_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown kind"):
        malformed("late", 0, SPEED_MESSAGE)


def test_due_malformed_is_the_fraction_of_all_records_rounded_down():
    assert due_malformed(0, 0.05) == 0
    assert due_malformed(19, 0.05) == 1  # 1 of 20
    assert due_malformed(18, 0.05) == 0
    assert due_malformed(99, 0.01) == 1
    assert due_malformed(1_000_000, 0.5) == 1_000_000


def _published(config: PublisherConfig, ticks: int, faulty: bool):
    """(topic, value, key) of every record of the first ``ticks`` ticks, and the source."""
    source = SyntheticSource(config, derive(config))
    sending = FaultySource(source, config.faulty_fraction) if faulty else source
    records: list[tuple[str, bytes, bytes]] = []
    sent = 0
    for tick in range(ticks):
        offsets = sending.offsets(tick)
        for index, due in enumerate(offsets):
            produce = lambda t, v, k: records.append((t, v, k))  # noqa: E731
            sent += sending.send(produce, tick, index, 1000 * tick, int(1000 * due))
    assert sent == len(records)
    return records, sending


def test_the_valid_stream_is_exactly_the_latency_workloads():
    latency = PublisherConfig(rate=400, duration_s=10)
    faulty = PublisherConfig(rate=400, duration_s=10, workload="faulty-event", faulty_fraction=0.05)
    plain, _ = _published(latency, 5, faulty=False)
    mixed, source = _published(faulty, 5, faulty=True)
    assert [r for r in mixed if m.classify(r[1]) is None] == plain
    bad = [r for r in mixed if m.classify(r[1]) is not None]
    assert len(bad) == due_malformed(len(plain), 0.05) > 0
    assert len(bad) / len(mixed) == pytest.approx(0.05, abs=0.002)
    # kinds in turn, each derived from a message just sent, to its topic with its key
    assert [m.classify(v) for _, v, _ in bad] == [m.KINDS[i % 9] for i in range(len(bad))]
    assert source.sent == {kind: sum(1 for _, v, _ in bad if m.classify(v) == kind)
                           for kind in m.KINDS}  # fmt: skip
    keys = {(t, k) for t, _, k in plain}
    assert all((t, k) in keys for t, _, k in bad)
    assert {t for t, _, _ in bad} == {latency.speed_topic, latency.flow_topic}


def test_the_faulty_event_schedule_is_the_latency_schedule():
    latency = PublisherConfig(rate=400, duration_s=10)
    faulty = PublisherConfig(rate=400, duration_s=10, workload="faulty-event")
    a, b = schedule(latency, derive(latency)), schedule(faulty, derive(faulty))
    assert [a.tick_offsets(k) for k in range(10)] == [b.tick_offsets(k) for k in range(10)]


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5])
def test_faulty_fraction_is_between_0_and_1(fraction):
    with pytest.raises(ConfigError, match="faulty_fraction"):
        PublisherConfig(workload="faulty-event", faulty_fraction=fraction)


def test_a_malformed_value_keeps_its_messages_identity():
    value = malformed(m.UNKNOWN_FIELD, 0, SPEED_MESSAGE)
    fields = json.loads(value)
    keys = (s.LOCATION_ID, s.LANE, s.OBSERVATION_TS)
    assert {k: fields[k] for k in keys} == {k: SPEED_MESSAGE[k] for k in keys}
    assert encode(SPEED_MESSAGE) != value
