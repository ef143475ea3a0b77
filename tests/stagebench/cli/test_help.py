"""What ``--help`` says: each option what it does and its default, never a figure some run
once measured; ``compare --help`` one example of each of its three modes."""

import argparse
import re
from collections.abc import Iterator

from stagebench.cli import build_parser
from tests.engines.test_config import subcommand

MEASUREMENT = re.compile(r"\bp\d\d(\.\d+)? (at |of |was )?[\d,.]+ ?ms|\b(gave|took)\b|measured p\d")
"""A past latency (``p50 6 ms``, ``p50 at 51 ms``) or what a run gave or took."""


def options(parser: argparse.ArgumentParser, words: str = "stagebench") -> Iterator[tuple]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from options(child, f"{words} {name}")
        elif action.option_strings and not {"-h", "--version"} & set(action.option_strings):
            yield words, action.option_strings[-1], action.help or ""


def test_every_option_states_its_default_and_quotes_no_measurement():
    found = list(options(build_parser()))
    assert len(found) > 150
    silent = [(w, o) for w, o, text in found if not re.search(r"\((default|required)\b", text)]
    assert silent == []
    measured = [(w, o, text) for w, o, text in found if MEASUREMENT.search(text)]
    assert measured == []
    assert MEASUREMENT.search("which measured p50 6 ms instead of 1")
    assert not MEASUREMENT.search("such as p99=1s or p50=250ms")


def test_compare_help_shows_one_example_of_each_mode():
    text = subcommand("compare").format_help()
    examples = text.split("examples, one of each mode:\n", 1)[1].split("\n\n", 1)[0]
    commands = [line.strip() for line in examples.splitlines() if "stagebench compare" in line]
    assert len(commands) == 3
    table, ab, check = commands
    assert len(table.split()) == 3  # one suite directory: its stage table
    assert len(ab.split()) == 4  # two runs of one stage
    assert "--baseline" in check and "--max-regression" in check
