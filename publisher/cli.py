"""``stagebench publish``: run the publisher from the command line.

Builds a :class:`PublisherConfig` from the options (options left out keep the
config's defaults), makes sure the two topics exist and obey the one-clock
rule, stops cleanly on Ctrl-C/SIGTERM (the send loop flushes), shows progress
on stderr and writes the summary JSON. Exit 1 when any message failed, 130
when stopped by a signal (after the flush and the summary).
"""

import argparse
import json
import math
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from publisher.config import DEFAULT_RATE, PublisherConfig
from publisher.summary import ProgressSnapshot
from stagebench.config import from_mapping
from stagebench.errors import PublishError

QUIET_EVERY_S = 5.0

# option dest -> PublisherConfig field, for options that map one to one
_FIELDS = (
    "rate",
    "locations",
    "min_lanes",
    "max_lanes",
    "seed",
    "time_scale",
    "start_minute",
    "workload",
    "burst_messages",
    "burst_every_s",
    "burst_duration_s",
    "backlog_s",
    "backlog_rate",
    "ramp_rates",
    "ramp_step_s",
    "duration_s",
    "max_messages",
    "acks",
    "linger_ms",
    "speed_topic",
    "flow_topic",
    "from_file",
)


def _rates(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(r) for r in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated rates, got {text!r}") from err


def register(subparsers: argparse._SubParsersAction) -> None:
    d = PublisherConfig()
    p = subparsers.add_parser(
        "publish",
        help="publish NDW-style speed/flow observations at a set rate",
        description="Publish synthetic NDW-style speed and flow observations (or replay a file) "
        "on an open-loop schedule. messages/s = 2 × lanes in total × data minutes per second: "
        "give --rate and the locations are derived, or --locations and the rate is derived.",
    )
    p.add_argument(
        "--bootstrap",
        help="Kafka bootstrap servers (default: $STAGEBENCH_BOOTSTRAP, else the embedded broker)",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--rate", type=float, help=f"messages/s over both topics (default {DEFAULT_RATE:g})"
    )
    size.add_argument("--locations", type=int, help="number of locations (default: from --rate)")
    p.add_argument(
        "--min-lanes", type=int, help=f"fewest lanes per location (default {d.min_lanes})"
    )
    p.add_argument("--max-lanes", type=int, help=f"most lanes per location (default {d.max_lanes})")
    p.add_argument("--seed", type=int, help=f"seed of the synthetic data (default {d.seed})")
    p.add_argument(
        "--time-scale",
        type=float,
        help=f"data minutes published per wall-clock second (default {d.time_scale:g})",
    )
    p.add_argument(
        "--start-minute",
        type=int,
        help=f"time of day of the first data minute, minutes after midnight "
        f"(default {d.start_minute})",
    )
    p.add_argument(
        "--workload",
        choices=("constant", "periodic-burst", "single-burst", "ramp"),
        help=f"shape of the load over time (default {d.workload})",
    )
    p.add_argument(
        "--burst-messages",
        type=int,
        help=f"periodic-burst: messages per burst (default {d.burst_messages})",
    )
    p.add_argument(
        "--burst-every",
        dest="burst_every_s",
        type=float,
        help=f"periodic-burst: seconds between bursts (default {d.burst_every_s:g})",
    )
    p.add_argument(
        "--burst-duration",
        dest="burst_duration_s",
        type=float,
        help=f"periodic-burst: seconds a burst is spread over, 0 = at once "
        f"(default {d.burst_duration_s:g})",
    )
    p.add_argument(
        "--backlog",
        dest="backlog_s",
        type=float,
        help=f"single-burst: seconds published at --backlog-rate first (default {d.backlog_s:g})",
    )
    p.add_argument(
        "--backlog-rate",
        type=float,
        help=f"single-burst: messages/s of the backlog (default {d.backlog_rate:g})",
    )
    p.add_argument(
        "--ramp-rates", type=_rates, help="ramp: comma-separated messages/s, one per step"
    )
    p.add_argument(
        "--ramp-step",
        dest="ramp_step_s",
        type=float,
        help=f"ramp: seconds per step (default {d.ramp_step_s:g})",
    )
    p.add_argument(
        "--duration",
        dest="duration_s",
        type=float,
        help="seconds to publish (default 60; single-burst: backlog + 60; ramp: all steps; "
        "--from-file: the whole file)",
    )
    p.add_argument("--max-messages", type=int, help="stop after this many messages (default: none)")
    p.add_argument("--acks", choices=("0", "1", "all"), help=f"producer acks (default {d.acks})")
    p.add_argument("--linger-ms", type=float, help=f"producer linger.ms (default {d.linger_ms:g})")
    p.add_argument("--speed-topic", help=f"topic of speed observations (default {d.speed_topic})")
    p.add_argument("--flow-topic", help=f"topic of flow observations (default {d.flow_topic})")
    p.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of topics this command creates when missing (default 1)",
    )
    p.add_argument(
        "--from-file", help="replay this JSON-lines file of observations (default: synthetic)"
    )
    p.add_argument("--summary", type=Path, help="write the JSON summary here (default: none)")
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> PublisherConfig:
    given = {name: getattr(args, name) for name in _FIELDS if getattr(args, name) is not None}
    return from_mapping(PublisherConfig, given, "publisher")


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    from publisher.producer import publish
    from publisher.sizing import derive
    from stagebench.bootstrap import resolve

    bootstrap = resolve(args.bootstrap)
    if not config.from_file:
        print(f"publishing {config.workload}: {derive(config).describe()}", file=sys.stderr)
    ensure_topics(bootstrap, [config.speed_topic, config.flow_topic], args.partitions)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in _STOP_SIGNALS}
    display = ProgressDisplay(sys.stderr)
    try:
        summary = publish(bootstrap, config, stop=stop, progress=display)
    finally:
        display.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(json.dumps(summary.to_dict(), indent=2) + "\n")
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
            f"{lag['max']:.0f} ms): latencies of this run include publisher delay",
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
    from stagebench.topics import check_topics, create_topics, inspect_topics

    report = inspect_topics(bootstrap, names)
    missing = [n for n in names if n not in report.leaders]
    if missing:
        create_topics(bootstrap, missing, partitions=partitions, leader=report.leader)
    check_topics(bootstrap, names)


class ProgressDisplay:
    """One refreshed status line on a terminal; a line every few seconds otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._next_line = 0.0
        self._shown = False

    def __call__(self, snap: ProgressSnapshot) -> None:
        line = format_progress(snap)
        if self._tty:
            self._stream.write("\r\033[K" + line)
            self._shown = True
        elif time.monotonic() >= self._next_line:
            self._stream.write(line + "\n")
            self._next_line = time.monotonic() + QUIET_EVERY_S
        self._stream.flush()

    def close(self) -> None:
        if self._shown:
            self._stream.write("\n")
            self._stream.flush()


def format_progress(snap: ProgressSnapshot) -> str:
    total = "" if math.isinf(snap.end_s) else f"/{snap.end_s:.0f}"
    parts: list[Any] = [
        f"{snap.elapsed_s:6.1f}{total} s",
        f"sent {snap.sent:,}",
        f"{snap.rate:,.0f} msg/s",
        f"lag {snap.lag_ms:.1f} ms",
    ]
    if snap.delivery_errors:
        parts.append(f"errors {snap.delivery_errors}")
    if snap.behind:
        parts.append("BEHIND SCHEDULE")
    return " | ".join(parts)
