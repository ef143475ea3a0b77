"""``stagebench topics create|check``: topics that obey the one-clock rule."""

from stagebench.cli_args import add_bootstrap


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "topics",
        help="create or check benchmark topics (LogAppendTime, leader)",
        description="Benchmark topics use message.timestamp.type=LogAppendTime and have every "
        "partition led by one broker, so all timestamps come from one clock (SPEC §1).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, func, text in (
        ("create", _create, "create the speed, flow and output topics of a run"),
        ("check", _check, "verify timestamp type and leaders; exit 1 on any problem"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "names",
            nargs="*",
            metavar="TOPIC",
            help="topic names (default: the speed, flow and output topics of --run-id)",
        )
        action.add_argument("--run-id", help="run whose topics to use (create: default a new id)")
        action.add_argument(
            "--leader", type=int, help="broker id that must lead every partition (default: lowest)"
        )
        add_bootstrap(action)
        action.set_defaults(func=func)
    actions.choices["create"].add_argument(
        "--partitions", type=int, default=1, help="partitions per topic (default: %(default)s)"
    )


def _names(args) -> list[str]:
    from stagebench.errors import ConfigError
    from stagebench.naming import RunTopics, new_run_id

    if args.names and args.run_id:
        raise ConfigError("give topic names or --run-id, not both")
    if args.names:
        return args.names
    if args.action == "check" and not args.run_id:
        raise ConfigError("name the topics to check, or give --run-id")
    return RunTopics.for_run(args.run_id or new_run_id()).all


def _create(args) -> int:
    from stagebench.bootstrap import resolve
    from stagebench.errors import ConfigError
    from stagebench.topics import create_topics

    if args.partitions < 1:
        raise ConfigError("--partitions must be at least 1")
    names = _names(args)
    bootstrap = resolve(args.bootstrap)
    leader = create_topics(bootstrap, names, partitions=args.partitions, leader=args.leader)
    for name in names:
        print(f"created {name} ({args.partitions} partitions, LogAppendTime, leader {leader})")
    return 0


def _check(args) -> int:
    from stagebench.bootstrap import resolve
    from stagebench.topics import check_topics

    names = _names(args)
    report = check_topics(resolve(args.bootstrap), names, leader=args.leader)
    for name in names:
        print(f"ok {name}: {report.timestamp_types[name]}, leaders {report.leaders[name]}")
    return 0
