"""``stagebench topics create|check|prune``: topics that obey the one-clock rule, and the
deletion of past runs' topics."""

import argparse
import os
import re
import time

from ground import envvars
from ground.errors import ConfigError, TopicError
from ground.kafka.naming import RunTopics, new_run_id
from stagebench.cli.shared import Subparsers, add_bootstrap, flag


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
    prune = actions.add_parser(
        "prune",
        help="delete the topics of runs older than --older-than",
        description="Every run leaves its input, output and internal topics on the broker "
        "(stagebench-<run id>-…), so that `stagebench evaluate` can read it again; this "
        "deletes the topics of the runs whose newest record is older than --older-than. A run "
        "whose topics hold no record is kept: it may be one being set up. Without "
        "--bootstrap, the running embedded broker (none is started).",
    )
    prune.add_argument(
        "--older-than",
        type=duration_ms,
        default="7d",
        metavar="AGE",
        help="a number and s, m, h or d (default: %(default)s)",
    )
    flag(
        prune, "--dry-run", "list the runs that would be deleted, delete nothing (default: delete)"
    )
    add_bootstrap(prune)
    prune.set_defaults(handler=prune_topics)
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
    from ground.kafka.topics import create_topics
    from stagebench.run.bootstrap import resolve

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
    from ground.kafka.topics import check_topics
    from stagebench.run.bootstrap import resolve

    names = _names(args)
    report = check_topics(resolve(args.bootstrap), names, leader=args.leader)
    for name in names:
        print(f"ok {name}: {report.timestamp_types[name]}, leaders {report.leaders[name]}")
    return 0


_UNITS_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text: str) -> int:
    """``7d``, ``12h``, ``30m``, ``90s`` in milliseconds."""
    if not (match := re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", text.strip())):
        raise argparse.ArgumentTypeError(f"expected a number and s, m, h or d, got {text!r}")
    return int(float(match[1]) * _UNITS_MS[match[2]])


def prune_topics(args: argparse.Namespace) -> int:
    from ground.kafka.broker import EmbeddedBroker
    from ground.kafka.resolve import ensure_reachable
    from ground.kafka.topics import delete_topics, older_than, runs_on

    bootstrap = args.bootstrap or os.environ.get(envvars.BOOTSTRAP)
    if bootstrap:
        ensure_reachable(bootstrap)
    elif state := EmbeddedBroker().status():
        bootstrap = state.bootstrap
    else:
        print("no Kafka given and no embedded broker running: nothing to prune")
        return 0
    runs = runs_on(bootstrap)
    old = older_than(runs, int(time.time() * 1000), args.older_than)
    topics = [name for run in old for name in run.topics]
    verb = "would delete" if args.dry_run else "deleted"
    failed = delete_topics(bootstrap, topics) if topics and not args.dry_run else []
    for run in old:
        print(f"{verb} {run.run}: {len(run.topics)} topics")
    print(f"{verb} {len(topics) - len(failed)} topics of {len(old)} of {len(runs)} runs at "
          f"{bootstrap}; {len(runs) - len(old)} runs kept")  # fmt: skip
    if failed:
        raise TopicError(f"{len(failed)} topics could not be deleted: {'; '.join(failed)}")
    return 0
