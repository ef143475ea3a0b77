"""``stagebench topics create|check``: topics that obey the one-clock rule."""

import argparse

from ground.errors import ConfigError
from ground.kafka.naming import RunTopics, new_run_id
from stagebench.cli.shared import Subparsers, add_bootstrap


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "topics",
        help="create or check benchmark topics (LogAppendTime, leader)",
        description="Benchmark topics use message.timestamp.type=LogAppendTime and have every "
        "partition led by one broker, so all timestamps come from one clock "
        "(docs/method.md#clock).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("create", "create the speed, flow and output topics of a run"),
        ("check", "verify timestamp type and leaders; exit 1 on any problem"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "names",
            nargs="*",
            metavar="TOPIC",
            help="topic names (default: the speed, flow and output topics of --run-id)",
        )
        action.add_argument(
            "--run-id",
            help="run whose topics to use (default: create: a new id; check: none, then "
            "name the topics)",
        )
        action.add_argument(
            "--leader", type=int, help="broker id that must lead every partition (default: lowest)"
        )
        add_bootstrap(action)
        action.set_defaults(handler=create if name == "create" else check)
    create_parser = actions.choices["create"]
    create_parser.add_argument(
        "--partitions", type=int, default=1, help="partitions per topic (default: %(default)s)"
    )
    create_parser.add_argument(
        "--replication",
        type=int,
        help="replicas per partition, min.insync.replicas one less "
        "(default: the broker count, at most 3)",
    )


def _names(args: argparse.Namespace) -> list[str]:
    if args.names and args.run_id:
        raise ConfigError("give topic names or --run-id, not both")
    if args.names:
        names: list[str] = args.names
        return names
    if args.action == "check" and not args.run_id:
        raise ConfigError("name the topics to check, or give --run-id")
    return RunTopics.for_run(args.run_id or new_run_id()).all


def create(args: argparse.Namespace) -> int:
    from ground.kafka.resolve import resolve
    from ground.kafka.topics import create_topics

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


def check(args: argparse.Namespace) -> int:
    from ground.kafka.resolve import resolve
    from ground.kafka.topics import check_topics

    names = _names(args)
    report = check_topics(resolve(args.bootstrap), names, leader=args.leader)
    for name in names:
        print(f"ok {name}: {report.timestamp_types[name]}, leaders {report.leaders[name]}")
    return 0
