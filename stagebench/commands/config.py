"""``stagebench config show``: the effective configuration and where each value comes from."""

import json

from ground.config import from_mapping
from stagebench.options import run_overrides
from stagebench.settings import RunConfig, effective, load


def show(args) -> int:
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
