"""The manual stays true (docs/development.md#tests): every ``--option`` a page of README.md
and docs/ names exists in the command it is named with, every relative link and anchor
resolves, every path in backticks that looks like one of the repository's exists, and every
TOML key a page names is a key of its table. Pure: it reads the pages and builds the
parsers, and starts nothing. A failure names the page, the line and what is wrong."""

import argparse
import dataclasses
import itertools
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from ground.errors import ConfigError
from stagebench.cli import build_parser
from stagebench.config.layers import SET, load, parse_set, section_classes

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ("results-schema.md", "comparison-schema.md", "capacity-schema.md")
"""Pages ``python -m evaluator.files.result_schema`` and ``stagebench.capacity.schema`` write."""
PAGES = ("README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")))

FOREIGN = {
    "--command-config": "Kafka's own tools take a client properties file with it",
    "--profile": "docker compose's",
}
"""Options of other programs that pages name alone, with the program."""
COMMAND_SPLIT = re.compile(r"\s*(?:&&|\|\||[|;&]|\s#\s|^#\s)\s*")


@dataclass(frozen=True)
class Line:
    page: str
    number: int
    text: str
    code: bool
    """Inside a fenced block."""
    section: int
    """Which heading's section (0: before the first)."""
    block: int
    """Which paragraph, list item or table row (a fenced block's lines share one)."""

    def where(self) -> str:
        return f"{self.page}:{self.number}"


@cache
def lines(page: str) -> tuple[Line, ...]:
    """The page's lines, each with its section and block; a fenced block's ``\\``
    continuations, and a code span's continuation on the next line, are joined onto their
    first line."""
    out: list[Line] = []
    fence: str | None = None
    section = block = 0
    pending = ""
    opened: tuple[int, str] | None = None  # a prose line whose code span goes on
    for number, text in enumerate((ROOT / page).read_text().splitlines(), 1):
        if opened is not None and fence is None and text.strip():
            number, text = opened[0], f"{opened[1]} {text.strip()}"
            out.pop()
        opened = None
        stripped = text.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
                block += 1
                continue
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            out.append(Line(page, number, pending + text, True, section, block))
            pending = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            block += 1
            continue
        if stripped.startswith("#"):
            section += 1
        if (
            not stripped
            or stripped.startswith(("#", "|", "- ", "* ", "<!--"))
            or re.match(r"\d+\. ", stripped)
        ):
            block += 1
        if stripped:
            out.append(Line(page, number, text, False, section, block))
            if text.count("`") % 2 and not stripped.startswith(("|", "#")):
                opened = (number, text)
    return tuple(out)


def spans(text: str) -> list[str]:
    """The inline code spans of a line of prose, links' texts left out."""
    text = re.sub(r"\[(`[^`]*`)\]\([^)]*\)", "", text)
    return [m[2] for m in re.finditer(r"(`+)(.+?)\1", text)]


# --- the commands -------------------------------------------------------------------


@cache
def commands() -> dict[str, frozenset[str]]:
    """Every command's options, by its words ("run", "broker start"); a command with
    actions also under its own name, with every action's options."""
    found: dict[str, frozenset[str]] = {}

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        options = {o for a in parser._actions for o in a.option_strings}
        found[words] = frozenset(options)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, f"{words} {name}".strip())
                    found[words] = found[words] | found[f"{words} {name}".strip()]

    walk(build_parser(), "")
    del found[""]
    return found


def command_at(tokens: list[str]) -> tuple[str, list[str]] | None:
    """The command ``tokens`` start with ("config show") and the tokens after it."""
    if not tokens or tokens[0] not in commands():
        return None
    words, rest = tokens[0], tokens[1:]
    if rest and f"{words} {rest[0]}" in commands():
        words, rest = f"{words} {rest[0]}", rest[1:]
    return words, rest


def invocations(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each ``stagebench COMMAND …`` in ``text`` (a shell line or a span), as the command's
    words and its tokens; what follows a comment or another shell command is left out."""
    for part in COMMAND_SPLIT.split(text):
        tokens = part.split()
        for i, token in enumerate(tokens):
            if token == "stagebench" or token.endswith("/stagebench"):
                found = command_at(tokens[i + 1 :])
                if found:
                    yield found
                break


def option_names(tokens: list[str]) -> list[str]:
    return [re.split(r"[=,.;:)\]…]", t, maxsplit=1)[0] for t in tokens if t.startswith("--")]


def named_commands(texts: list[str]) -> set[str]:
    """The commands the spans ``texts`` name: ``stagebench run …``, ``run`` or ``suite
    --repeat 3``."""
    named = set()
    for text in texts:
        named |= {words for words, _ in invocations(text)}
        if found := command_at(text.split()):
            named.add(found[0])
    return named


def option_errors(page: str) -> list[str]:
    """Each option a page names that the command it is named with lacks.

    In a ``stagebench COMMAND`` line or span the command is that one. An option named
    alone belongs to one of the commands its paragraph, list item or table row names;
    else to each command its section's heading names; else to one of those its section's
    code blocks run; else to one of those the page's run; else to any command. A block
    that names a script or another program (``quick_start.py``) is left to it."""
    errors = []
    doc = lines(page)
    named: dict[tuple[str, int], set[str]] = {}
    for line in doc:
        texts = [line.text] if line.code else spans(line.text)
        found = named_commands(texts)
        for scope in [("block", line.block)] if not line.code else []:
            named.setdefault(scope, set()).update(found)
        if line.text.startswith("#") and not line.code:
            named[("heading", line.section)] = found
        if line.code:
            named.setdefault(("section", line.section), set()).update(found)
            named.setdefault(("page", 0), set()).update(found)
        if re.search(r"\.py\b", line.text) or any(t.startswith("python ") for t in texts):
            named.setdefault(("script", line.block), set()).add("script")
    for line in doc:
        for text in [line.text] if line.code else spans(line.text):
            told = list(invocations(text))
            if not told and (found := command_at(text.split())):
                told = [found]
            for words, tokens in told:
                for option in option_names(tokens):
                    if option not in commands()[words]:
                        errors.append(f"{line.where()}: `stagebench {words}` has no {option}")
                for pair in (b for a, b in itertools.pairwise(tokens) if a == SET):
                    if problem := set_error(pair.strip("'\"")):
                        errors.append(f"{line.where()}: {SET} {pair}: {problem}")
            if told or line.code or not text.startswith("--") or ("script", line.block) in named:
                continue
            for option in option_names(text.split()):
                if option not in FOREIGN and (problem := _lacks(option, line, named)):
                    errors.append(f"{line.where()}: {option} is named with {problem}")
    return errors


def set_error(pair: str) -> str | None:
    """What the product refuses in ``--set pair`` (None: nothing)."""
    try:
        load(None, parse_set([pair]))
    except ConfigError as err:
        return str(err)
    return None


def _lacks(option: str, line: Line, named: dict[tuple[str, int], set[str]]) -> str | None:
    """Which commands in ``line``'s context lack ``option`` (None: it is there)."""
    heading = named.get(("heading", line.section))
    if heading and not named.get(("block", line.block)):
        if lacking := sorted(w for w in heading if option not in commands()[w]):
            return f"{_words(heading)} (its heading), but {_words(lacking)} has none"
        return None
    context = (
        named.get(("block", line.block))
        or named.get(("section", line.section))
        or named.get(("page", 0))
        or set(commands())
    )
    if any(option in commands()[w] for w in context):
        return None
    return f"{_words(context)}, which {'has' if len(context) == 1 else 'have'} no such option"


def _words(words: typing.Iterable[str]) -> str:
    return ", ".join(f"`{w}`" for w in sorted(words))


# --- links and paths ----------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: formatting dropped, lower case, punctuation but
    hyphens and underscores removed, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.lstrip("#").strip())
    text = re.sub(r"[`*]", "", text).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: str) -> frozenset[str]:
    """The anchors of a page's headings, a repeated one numbered as GitHub numbers it."""
    seen: dict[str, int] = {}
    found = set()
    for line in lines(page):
        if not line.code and re.match(r"#{1,6} ", line.text):
            base = slug(line.text)
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    return frozenset(found)


def link_errors(page: str) -> list[str]:
    errors = []
    for line in lines(page):
        if line.code:
            continue
        prose = re.sub(r"(`+).+?\1", lambda m: "x" * len(m[0]), line.text)
        for match in re.finditer(r"\]\(([^)\s]+)\)", prose):
            target = line.text[match.start(1) : match.end(1)]
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (ROOT / page).parent / path if path else ROOT / page
            if not resolved.exists():
                errors.append(f"{line.where()}: link {target}: no {path}")
                continue
            shown = resolved.resolve().relative_to(ROOT).as_posix()
            if anchor and resolved.suffix == ".md" and anchor not in anchors(shown):
                errors.append(f"{line.where()}: link {target}: {shown} has no heading #{anchor}")
    return errors


SOURCE = (".py", ".txt", ".scala", ".java", ".toml", ".yml", ".yaml", ".sh", ".cfg", ".ini")
"""A name in backticks with one of these endings is a file of the repository."""


@cache
def top_level() -> frozenset[str]:
    skip = {".venv", ".git", "results", "build"}
    return frozenset(p.name for p in ROOT.iterdir() if p.name not in skip)


KEYS = {"versions.java": "summary.json's key"}
"""Spans with a source file's ending that are no file."""


def path_errors(page: str) -> list[str]:
    """Each span that looks like a path of the repository (its first part is a top-level
    entry, or a file name with a source file's ending) and is not there: a path is taken
    from the repository's root or the page's directory, a file name also from a directory
    its section names (`benchmarks/`); an anchor after it must be a heading of it."""
    errors = []
    doc = lines(page)
    folders: dict[int, list[Path]] = {}
    for line in doc:
        for text in [] if line.code else spans(line.text):
            if text.endswith("/") and (ROOT / text).is_dir():
                folders.setdefault(line.section, []).append(ROOT / text)
    for line in doc:
        for text in [] if line.code else spans(line.text):
            if re.search(r"[\s<>~$*…{}]|[A-Z]{2,}_|://", text) or text.startswith(".."):
                continue
            text, _, anchor = text.rstrip("/").partition("#")
            first = text.split("/", 1)[0]
            bare = "/" not in text and text.endswith(SOURCE) and text not in KEYS
            if not (("/" in text and first in top_level()) or bare):
                continue
            bases = [ROOT, (ROOT / page).parent, *(folders.get(line.section, []) if bare else [])]
            found = next((base / text for base in bases if (base / text).exists()), None)
            if found is None:
                errors.append(f"{line.where()}: `{text}` is not in the repository")
            elif anchor and found.suffix == ".md":
                shown = found.resolve().relative_to(ROOT).as_posix()
                if anchor not in anchors(shown):
                    errors.append(f"{line.where()}: `{text}#{anchor}`: no heading #{anchor}")
    return errors


# --- TOML keys ----------------------------------------------------------------------


def fields(section: str) -> dict[str, typing.Any] | None:
    """A table's keys and their types; None: no such table."""
    cls = section_classes().get(section)
    if cls is None:
        return None
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def table_key(section: str, key: str | None) -> str | None:
    """What is wrong with ``[section] key`` (None: nothing); ``section`` may name a
    table-valued key (``engine.spark.spark_conf``)."""
    known = fields(section)
    if known is None:
        parent, _, name = section.rpartition(".")
        if fields(parent) is not None and typing.get_origin(fields(parent).get(name)) is dict:
            return None
        return f"no table [{section}] (tables: {', '.join(section_classes())})"
    if key is not None and key not in known:
        return f"[{section}] has no key {key}"
    return None


def toml_errors(page: str, tmp_path: Path) -> list[str]:
    """Each TOML block the product's loader refuses; each ``[table] key``, ``key = value``
    and row of a table of keys naming a key its table lacks."""
    errors = []
    doc = lines(page)
    text = (ROOT / page).read_text().splitlines()
    for start, first in enumerate(text):
        if first.strip() == "```toml":
            end = next(i for i in range(start + 1, len(text)) if text[i].strip() == "```")
            path = tmp_path / "page.toml"
            path.write_text("\n".join(text[start + 1 : end]))
            try:
                load(path, {})
            except ConfigError as err:
                message = str(err).replace(f" in file {path}", "")
                errors.append(f"{page}:{start + 1}: the TOML block is refused: {message}")
    table: dict[int, str] = {}  # the last [table] each section names
    for line in doc:
        if line.code:
            continue
        for span in spans(line.text):
            if match := re.fullmatch(r"\[([\w.-]+)\](?:\s+(\w+))?(?:\s*=.*)?", span):
                if problem := table_key(match[1], match[2]):
                    errors.append(f"{line.where()}: `{span}`: {problem}")
                elif fields(match[1]) is not None:
                    table[line.section] = match[1]
            elif match := re.fullmatch(r"([a-z][a-z0-9_]*) = \S.*", span):
                section = table.get(line.section)
                where = [section] if section else list(section_classes())
                if not any(match[1] in (fields(s) or {}) for s in where):
                    named = f"[{section}]" if section else "any table"
                    errors.append(f"{line.where()}: `{span}`: {named} has no key {match[1]}")
        cells = [c.strip() for c in line.text.strip().strip("|").split("|")]
        if line.text.startswith("|") and cells[0] == "key":
            table[-line.block] = table.get(line.section, "")
        elif line.text.startswith("|") and cells and (section := _key_table(doc, line, table)):
            for key in re.findall(r"`([a-z][a-z0-9_]*)`", cells[0]):
                if problem := table_key(section, key):
                    errors.append(f"{line.where()}: {problem}")
    return errors


def _key_table(doc: tuple[Line, ...], line: Line, table: dict[int, str]) -> str | None:
    """The table a row of a table of keys (first header cell "key") documents."""
    rows = [x for x in doc if x.section == line.section and x.text.startswith("|")]
    start = max((x.number for x in rows if x.number < line.number and "| key |" in x.text),
                default=None)  # fmt: skip
    if start is None or any(
        x.number for x in doc if start < x.number < line.number and not x.text.startswith("|")
    ):
        return None
    return table.get(line.section) or None


# --- the tests ----------------------------------------------------------------------


def report(errors: list[str]) -> str:
    return f"{len(errors)} place(s) in the manual are not true:\n" + "\n".join(errors)


@pytest.mark.parametrize("page", [p for p in PAGES if Path(p).name not in GENERATED])
def test_every_option_a_page_names_is_its_command_s(page):
    assert not (errors := option_errors(page)), report(errors)


@pytest.mark.parametrize("page", PAGES)
def test_every_link_and_anchor_resolves(page):
    assert not (errors := link_errors(page)), report(errors)


@pytest.mark.parametrize("page", PAGES)
def test_every_path_in_backticks_is_in_the_repository(page):
    assert not (errors := path_errors(page)), report(errors)


@pytest.mark.parametrize("page", [p for p in PAGES if Path(p).name not in GENERATED])
def test_every_toml_key_a_page_names_is_its_table_s(page, tmp_path):
    assert not (errors := toml_errors(page, tmp_path)), report(errors)


def test_usage_names_every_option_of_run_and_suite():
    """docs/usage.md's table of the options of ``run`` and ``suite`` leaves none out."""
    section = (ROOT / "docs" / "usage.md").read_text().split("## Options of `run` and `suite`")[1]
    table = section.split("\n## ", 1)[0]
    named = set(re.findall(r"`(--[a-z][a-z-]*)", table))
    own = (commands()["run"] | commands()["suite"]) - {"-h", "--help"}
    assert sorted(own - named) == []


def test_the_slugs_are_github_s():
    assert slug("## A/B comparisons") == "ab-comparisons"
    assert slug("### The host's pace") == "the-hosts-pace"
    assert slug("## `summary.json`") == "summaryjson"
    assert slug("## latencies.hlog") == "latencieshlog"
    assert slug("## Ready, drained, stopped") == "ready-drained-stopped"
    assert slug("## What it cannot do (yet)") == "what-it-cannot-do-yet"


def test_a_drifted_page_fails_with_its_line(tmp_path, monkeypatch):
    page = tmp_path / "docs" / "drift.md"
    page.parent.mkdir()
    page.write_text(
        "# Drift\n\n## Options of `run`\n\n"
        "`--no-such-option`.\n\n`stagebench suite --stages join --frobnicate`, "
        "`stagebench run --set engine.flink.buffer_timeout=1`.\n\n"
        "A [link](missing.md), an [anchor](#nowhere), the [heading](#options-of-run), "
        "`engines/nowhere.py`, `[engine.spark] no_such_key`, `[run] rate`.\n\n"
        "```toml\n[pipeline]\nwatermark_delay = 5\n```\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    lines.cache_clear()
    anchors.cache_clear()
    top_level.cache_clear()
    try:
        (tmp_path / "engines").mkdir()
        got = [
            *option_errors("docs/drift.md"),
            *link_errors("docs/drift.md"),
            *path_errors("docs/drift.md"),
            *toml_errors("docs/drift.md", tmp_path),
        ]
    finally:
        lines.cache_clear()
        anchors.cache_clear()
        top_level.cache_clear()
    assert got == [
        "docs/drift.md:5: --no-such-option is named with `run` (its heading), but `run` has none",
        "docs/drift.md:7: `stagebench suite` has no --frobnicate",
        "docs/drift.md:7: --set engine.flink.buffer_timeout=1: unknown key [engine.flink] "
        + got[2].split("unknown key [engine.flink] ", 1)[1],
        "docs/drift.md:9: link missing.md: no missing.md",
        "docs/drift.md:9: link #nowhere: docs/drift.md has no heading #nowhere",
        "docs/drift.md:9: `engines/nowhere.py` is not in the repository",
        "docs/drift.md:11: the TOML block is refused: unknown key [pipeline] watermark_delay "
        + got[-2].split("watermark_delay ", 1)[1],
        "docs/drift.md:9: `[engine.spark] no_such_key`: [engine.spark] has no key no_such_key",
    ]
