"""``stagebench config show``: the effective configuration and where each value comes from."""

import json

from stagebench.run_args import add_run_arguments, run_overrides


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "config",
        help="show the effective configuration and its sources",
        description="Configuration is layered: built-in defaults, then the TOML file given "
        "with --config, then command-line options. Unknown tables and keys are errors.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every setting, its value and its source")
    show.add_argument("--stage", help="as for run (default: ingest)")
    show.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_run_arguments(show)
    show.set_defaults(func=_show)


def _show(args) -> int:
    from stagebench.config import from_mapping
    from stagebench.runner import RunConfig
    from stagebench.settings import effective, load

    settings = load(args.config, run_overrides(args, stage=args.stage))
    from_mapping(RunConfig, settings.section("run"), "run")  # validate like run would
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
