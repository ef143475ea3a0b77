"""``stagebench config show``: the effective configuration and where each value comes from."""

import argparse
import json

from ground.config import from_mapping
from stagebench.cli.options import run_overrides
from stagebench.cli.shared import Subparsers, add_run_arguments, flag
from stagebench.config.layers import effective, load
from stagebench.config.roles import validate
from stagebench.config.settings import RunConfig


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "config",
        help="show the effective configuration and its sources",
        description="Configuration is layered: built-in defaults, then the TOML file given "
        "with --config, then command-line options. Unknown tables and keys are errors.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show_parser = actions.add_parser("show", help="print every setting, its value and its source")
    show_parser.add_argument("--stage", help=f"as for run (default: {RunConfig().stage})")
    flag(show_parser, "--json", "print JSON instead of a table (default: a table)")
    add_run_arguments(show_parser)
    show_parser.set_defaults(handler=show)


def show(args: argparse.Namespace) -> int:
    settings = load(args.config, run_overrides(args, stage=args.stage))
    validate(from_mapping(RunConfig, settings.section("run"), "run"), settings)  # as run would
    rows = effective(settings)
    if args.json:
        print(json.dumps([dict(zip(("section", "key", "value", "source"), r, strict=True))
                          for r in rows], indent=2, default=str))  # fmt: skip
        return 0
    section = None
    for name, key, value, source in rows:
        if name != section:
            print(f"[{name}]")
            section = name
        shown = "(set by the run)" if value is None and source.startswith("from ") else repr(value)
        print(f"  {key} = {shown}    # {source}")
    return 0
