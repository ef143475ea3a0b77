"""Arguments several subcommands share, defined once."""

from stagebench import envvars


def add_bootstrap(parser) -> None:
    parser.add_argument(
        "--bootstrap",
        metavar="HOST:PORT",
        help=f"Kafka to use (default: ${envvars.BOOTSTRAP}, else the running embedded broker, "
        "else a newly started one)",
    )
