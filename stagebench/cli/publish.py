"""``stagebench publish``: run the publisher alone.

Builds a :class:`PublisherConfig` from the options (options left out keep the
config's defaults), makes sure the two topics exist and obey the one-clock
rule, stops cleanly on Ctrl-C/SIGTERM (the send loop flushes), shows progress
on stderr and writes the summary JSON. Exit 1 when any message failed, 130
when stopped by a signal (after the flush and the summary).
"""

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ground import files
from ground.config import from_mapping
from ground.errors import PublishError
from publisher.config import PublisherConfig
from publisher.sizing import derive
from stagebench.cli.fields import add_field
from stagebench.cli.options import PUBLISH_FIELDS
from stagebench.cli.shared import Subparsers, add_bootstrap

if TYPE_CHECKING:  # numpy, which this module leaves to the command that runs
    from publisher.summary import ProgressSnapshot


def add(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "publish",
        help="publish NDW-style speed/flow observations at a set rate",
        description="Publish synthetic NDW-style speed and flow observations (or replay a file) "
        "on an open-loop schedule. messages/s = 2 × lanes in total × data minutes per second: "
        "give --rate and the locations are derived, or --locations and the rate is derived.",
    )
    add_bootstrap(parser)
    size = parser.add_mutually_exclusive_group()
    for name in PUBLISH_FIELDS:
        add_field(size if name in ("rate", "locations") else parser, PublisherConfig, name)
    parser.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of topics this command creates when missing (default: %(default)s)",
    )
    parser.add_argument("--summary", type=Path, help="write the JSON summary here (default: none)")
    parser.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> PublisherConfig:
    given = {n: getattr(args, n) for n in PUBLISH_FIELDS if getattr(args, n) is not None}
    return from_mapping(PublisherConfig, given, "publisher")


def run(args: argparse.Namespace) -> int:
    from publisher.producer import file_source, publish
    from stagebench.console import Console
    from stagebench.run.bootstrap import resolve

    config = config_from_args(args)
    # refused before a broker is started: a summary that cannot be written, a replay
    # file that cannot be read or breaks the contract
    if args.summary:
        files.writable_dir(args.summary.parent)
    replay = file_source(config)
    bootstrap = resolve(args.bootstrap)
    if not config.from_file:
        print(f"publishing {config.workload}: {derive(config).describe()}", file=sys.stderr)
    ensure_topics(bootstrap, [config.speed_topic, config.flow_topic], args.partitions)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in _STOP_SIGNALS}
    try:
        with Console().task("publishing", config.end_s) as update:
            summary = publish(
                bootstrap, config, stop, lambda s: update(s.elapsed_s, describe(s)), replay
            )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.summary:
        files.write(args.summary, json.dumps(summary.to_dict(), indent=2) + "\n")
    lag = summary.send_lag_ms
    per_topic = ", ".join(f"{t}: {n}" for t, n in summary.messages.items())
    print(
        f"sent {summary.sent} messages ({per_topic})"
        f" at {summary.achieved_rate:.1f} msg/s; send lag p50 {lag['p50']:.1f} ms, "
        f"p99 {lag['p99']:.1f} ms, max {lag['max']:.1f} ms; delivered {summary.delivered}, "
        f"errors {summary.delivery_errors}" + (" (stopped early)" if summary.stopped_early else "")
    )
    if summary.behind:
        print(
            "WARNING: the publisher fell behind its schedule (max send lag "
            f"{lag['max']:.0f} ms): the offered load was lower than asked",
            file=sys.stderr,
        )
    if not summary.ok:
        detail = "; ".join(summary.first_errors) or f"{summary.undelivered} never delivered"
        raise PublishError(
            f"{summary.delivery_errors + summary.undelivered} messages were not delivered: {detail}"
        )
    return 130 if summary.stopped_early else 0  # 130: stopped by a signal, after a clean flush


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ensure_topics(bootstrap: str, names: list[str], partitions: int) -> None:
    """Create the topics that are missing, then refuse topics that break the one-clock rule."""
    from ground.kafka.topics import check_topics, create_topics, inspect_topics

    report = inspect_topics(bootstrap, names)
    missing = [n for n in names if n not in report.leaders]
    if missing:
        create_topics(bootstrap, missing, partitions=partitions, leader=report.leader)
    check_topics(bootstrap, names)


def describe(snap: "ProgressSnapshot") -> str:
    """The publisher's progress beside its bar: sent, rate, send lag, trouble."""
    parts: list[Any] = [
        f"sent {snap.sent:,}",
        f"{snap.rate:,.0f} msg/s",
        f"lag {snap.lag_ms:.1f} ms",
    ]
    if snap.delivery_errors:
        parts.append(f"errors {snap.delivery_errors}")
    if snap.behind:
        parts.append("BEHIND SCHEDULE")
    return " | ".join(parts)
