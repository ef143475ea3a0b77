"""``stagebench topics create|check``: topics that obey the one-clock rule."""

from ground.errors import ConfigError
from ground.kafka.naming import RunTopics, new_run_id
from ground.kafka.resolve import resolve
from ground.kafka.topics import check_topics, create_topics


def _names(args) -> list[str]:

    if args.names and args.run_id:
        raise ConfigError("give topic names or --run-id, not both")
    if args.names:
        return args.names
    if args.action == "check" and not args.run_id:
        raise ConfigError("name the topics to check, or give --run-id")
    return RunTopics.for_run(args.run_id or new_run_id()).all


def create(args) -> int:

    if args.partitions < 1:
        raise ConfigError("--partitions must be at least 1")
    names = _names(args)
    bootstrap = resolve(args.bootstrap)
    if args.replication is not None and args.replication < 1:
        raise ConfigError("--replication must be at least 1")
    leader = create_topics(
        bootstrap, names, partitions=args.partitions, leader=args.leader,
        replication=args.replication,
    )  # fmt: skip
    for name in names:
        print(f"created {name} ({args.partitions} partitions, LogAppendTime, leader {leader})")
    return 0


def check(args) -> int:

    names = _names(args)
    report = check_topics(resolve(args.bootstrap), names, leader=args.leader)
    for name in names:
        print(f"ok {name}: {report.timestamp_types[name]}, leaders {report.leaders[name]}")
    return 0
