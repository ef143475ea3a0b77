"""Topic creation and the one-clock check against a real broker."""

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from ground.errors import TopicError
from ground.kafka.topics import check_topics, create_topics, leader_problems

pytestmark = pytest.mark.integration


def test_created_topics_pass_the_check(kafka_bootstrap, unique):
    names = [f"speed-{unique}", f"flow-{unique}", f"out-{unique}"]
    leader = create_topics(kafka_bootstrap, names, partitions=2)
    report = check_topics(kafka_bootstrap, names, leader=leader)
    assert report.timestamp_types == dict.fromkeys(names, "LogAppendTime")
    assert report.leaders == {name: [leader, leader] for name in names}


def test_check_rejects_a_create_time_topic(kafka_bootstrap, unique):
    good, bad = f"good-{unique}", f"createtime-{unique}"
    create_topics(kafka_bootstrap, [good])
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)  # the independent client
    admin.create_topics(
        [NewTopic(bad, 1, 1, topic_configs={"message.timestamp.type": "CreateTime"})]
    )
    admin.close()
    with pytest.raises(TopicError, match=f"{bad}.*CreateTime"):
        check_topics(kafka_bootstrap, [good, bad])


def test_check_rejects_another_leader_and_missing_topics(kafka_bootstrap, unique):
    name = f"led-{unique}"
    leader = create_topics(kafka_bootstrap, [name])
    with pytest.raises(TopicError, match=f"led by broker {leader}, not {leader + 1}"):
        check_topics(kafka_bootstrap, [name], leader=leader + 1)
    with pytest.raises(TopicError, match="does not exist"):
        check_topics(kafka_bootstrap, [f"missing-{unique}"])


def test_existing_topic_is_not_silently_reused(kafka_bootstrap, unique):
    name = f"dup-{unique}"
    create_topics(kafka_bootstrap, [name])
    with pytest.raises(TopicError, match="already exists"):
        create_topics(kafka_bootstrap, [name])


@pytest.mark.parametrize(
    ("leaders", "leader", "found"),
    [
        ({"a": [1, 1], "b": [1]}, None, []),
        ({"a": [1, 1], "b": [1]}, 1, []),
        ({"a": [1, 1]}, 2, ["partitions are led by broker 1, not 2"]),
        ({"a": [1, 2]}, None, ["partitions are led by brokers [1, 2]"]),
        ({"a": [-1, -1]}, None, ["partitions without a leader"]),
        ({"a": [1, -1], "b": [2]}, 1, ["partitions without a leader", "led by brokers [1, 2]"]),
    ],
)
def test_leader_problems_name_each_break_of_the_same_leader_rule(leaders, leader, found):
    problems = leader_problems(leaders, leader)
    assert len(problems) == len(found)
    for problem, start in zip(problems, found, strict=True):
        assert start in problem
