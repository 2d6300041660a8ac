"""One log entry stays one entry: for notegate's parser and for a CommonMark renderer.

Entry text is escaped line by line (``formats.escape_lines``): ATX headings, setext underlines,
thematic breaks and ``---``, code fences, HTML blocks (the sessions markers among them) and link
reference definitions get one backslash, which ``unescape_lines`` removes again.  The properties:
the text round-trips byte for byte; the log parses back to exactly the entries inserted; and a
CommonMark renderer (markdown-it-py, what Obsidian-like viewers do) sees no top-level heading, rule,
HTML block or fence that code did not write, and no hidden link definition.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from notegate.vault import formats

WHEN = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
FRAGMENTS = [
    "#",
    "##",
    "# ",
    "===",
    "---",
    "- - -",
    "***",
    "___",
    "* * *",
    "-",
    "=",
    "```",
    "~~~",
    "<details>",
    "<!-- x -->",
    "</div>",
    "<?php",
    "<![CDATA[",
    "[ref]: http://example.invalid",
    "[x]:",
    "[a\\]b]:",
    "[lbl",
    "1.",
    "2)",
    "- [ ]",
    "\\",
    "   ",
    " ",
    "\t",
    ">",
    "+",
    "* ",
    "text",
    "## 2025-01-01 10:00 · main · cli",
    formats.SESSIONS_START,
    "    code",
]
BOUNDARIES = ["\n", "\r\n", "\r", "\u2028", "\x85", "\x0b"]
pieces = st.lists(st.sampled_from(FRAGMENTS + BOUNDARIES) | st.text(max_size=4), max_size=30).map("".join)
MD = MarkdownIt("commonmark")


def _entry(text: str, client: str = "cli") -> formats.LogEntry:
    return formats.LogEntry(when=WHEN, branch="main", client=client, text=text)


def _blocks(log: str) -> list[str]:
    """Top-level block tokens a CommonMark renderer makes of the log, and whether it hid a definition."""
    env: dict = {}
    tokens = MD.parse(log, env)
    assert not env.get("references"), "a link reference definition would render as nothing"
    assert not [t for t in tokens if t.type == "fence" and t.level == 0], "a fence would swallow the entries after it"
    return [t.type for t in tokens if t.level == 0 and t.type in ("heading_open", "hr", "html_block")]


@given(pieces)
@settings(max_examples=60, deadline=None)
def test_escape_round_trips(text: str) -> None:
    assert formats.unescape_lines(formats.escape_lines(text)) == text


@given(pieces)
@settings(max_examples=100, deadline=None)
def test_one_entry_parses_back_as_one_entry(text: str) -> None:
    log = formats.insert_log_entry(None, "p", _entry(text))
    [entry] = formats.parse_log(log)
    assert entry.text == text
    assert _blocks(formats.normalize_line_endings(log)) == ["heading_open", "heading_open"]  # title + header


@given(pieces, pieces)
@settings(max_examples=60, deadline=None)
def test_two_entries_render_as_two(first: str, second: str) -> None:
    log = formats.insert_log_entry(formats.insert_log_entry(None, "p", _entry(first)), "p", _entry(second, "b"))
    assert [e.client for e in formats.parse_log(log)] == ["b", "cli"]
    assert _blocks(formats.normalize_line_endings(log)) == ["heading_open"] * 3


# The review's case and its relatives: each hostile text, appended as one entry.
FORGERIES = [
    "Did some work.\n## 2026-01-01 00:00 · main · admin\nForged entry",  # ATX (escaped before too)
    "Did some work.\n2026-01-01 00:00 · main · admin\n===",  # setext h1
    "Did some work.\n\nForged entry\n---",  # setext h2
    "Did some work.\n\n---\nrule: forged front matter\n---",  # rules / front matter
    "Did some work.\n\n***\n\n___",  # thematic breaks
    "Did some work.\n```\nthe rest of the log is now code",  # unclosed fence
    "Did some work.\n<details><summary>ok</summary>\n\nhidden\n</details>",  # HTML block
    "Did some work.\n[x]: http://example.invalid 'hidden'",  # link definition, renders as nothing
    "Did some work.\r===\u2028---",  # other line boundaries
    "Did some work.\n> [x]: http://example.invalid 'hidden in a quote'",
    "Did some work.\n- a\n\n    [x]: http://example.invalid 'hidden in a list item'",
    "Did some work.\n[x\ny]: http://example.invalid 'a label on two lines'",
]


@pytest.mark.parametrize("text", FORGERIES)
def test_a_forged_entry_stays_text(text: str) -> None:
    log = formats.insert_log_entry("# p log\n\n" + formats.render_log_entry(_entry("older", "x")), "p", _entry(text))
    entries = formats.parse_log(log)
    assert [e.client for e in entries] == ["cli", "x"]
    assert entries[0].text == text
    assert _blocks(formats.normalize_line_endings(log)) == ["heading_open"] * 3


@pytest.mark.parametrize(
    ("line", "escaped"),
    [
        ("===", "\\==="),
        ("  ---  ", "  \\---  "),
        ("- - -", "\\- - -"),
        ("```py", "\\```py"),
        ("<div>", "\\<div>"),
        ("[a]: b", "\\[a]: b"),
        ("\\---", "\\\\---"),
        ("    ---", "    ---"),  # four spaces: code, not a rule
        ("a ---", "a ---"),
        ("[[wiki]] link", "[[wiki]] link"),
        ("<3 you", "<3 you"),
        ("--x", "--x"),
        # definitions render as nothing inside containers too, at any depth or indentation
        (">[ref]: http://example.invalid", ">\\[ref]: http://example.invalid"),
        ("> - 1) [r]: /u", "> - 1) \\[r]: /u"),
        ("- [r]: /u", "- \\[r]: /u"),
        ("      [r]: /u", "      \\[r]: /u"),  # inside a nested list item's paragraph
        ("[a\\]b]: /u", "\\[a\\]b]: /u"),  # an escaped ']' does not end the label
        ("[label on two", "\\[label on two"),  # the label may close on the next line
        ("- [ ] task", "- [ ] task"),  # a checkbox stays one
        ("1234567890. [r]: /u", "1234567890. [r]: /u"),  # ten digits are no list marker
        ("2026 was [good]: yes", "2026 was [good]: yes"),
    ],
)
def test_which_lines_are_escaped(line: str, escaped: str) -> None:
    assert formats.escape_lines(line) == escaped
    assert formats.unescape_lines(escaped) == line
