"""Every parser that sees caller or model text runs in time linear in it.

Measured with tests/support/timing.py: each case builds a hostile shape at two sizes (16 KiB and 128 KiB, 8x
apart) and compares the parser's CPU time: linear is ~8x, quadratic ~64x, the bound 20x. A ratio, not an
absolute time: the test machines are busy.
The shapes are the ones the review found or that the old patterns would retry on: runs of blanks
after a key or inside a title, ``---`` runs, ``#``/backtick/``:`` runs, many ``key:`` lines, CR runs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from notegate.vault import fence, formats, frontmatter, held, lines
from support.timing import assert_catches_quadratic, assert_linear


def _fm(body: str) -> str:
    return "---\n" + body + "\n---\n"


def _log(n: int, tail: str) -> str:
    return "# p log\n\n" + tail


FRONT_MATTER_SHAPES: dict[str, Callable[[int], str]] = {
    # the review's case: 64 K spaces after 'branch: main' took 10.8 s per session_start
    "spaces-after-value": lambda n: _fm("branch: main" + " " * n),
    "spaces-then-text": lambda n: _fm("branch: main" + " " * n + "x"),
    "tabs-after-key": lambda n: _fm("branch:" + "\t" * n + "x"),
    "spaces-in-list-item": lambda n: _fm("tags:\n  - a" + " " * n + "x"),
    "many-key-lines": lambda n: _fm("".join(f"k{i}:\n" for i in range(n // 8))),
    "many-items": lambda n: _fm("tags:\n" + "  - a\n" * (n // 6)),
    "colon-run-value": lambda n: _fm("k: a" + ":" * n),
    "colon-run-key": lambda n: _fm("k" + ":" * n),
    "dash-lines": lambda n: "---\n" * (n // 4),
    "dash-run": lambda n: "---\n" + "-" * n,
    "cr-run": lambda n: "---\r" + "\r" * n,
    "flow-list": lambda n: _fm("k: [" + "a, " * (n // 3) + "a]"),
    "flow-list-quoted": lambda n: _fm("k: [" + "'a', " * (n // 5) + "'a']"),
    "double-quoted-escapes": lambda n: _fm('k: "' + '\\"' * (n // 2) + '"'),
    "unclosed": lambda n: "---\n" + "k: v\n" * (n // 5),
}


@pytest.mark.parametrize("shape", sorted(FRONT_MATTER_SHAPES))
def test_front_matter_is_linear(shape: str) -> None:
    assert_linear(frontmatter.split_front_matter, FRONT_MATTER_SHAPES[shape])


HEADING_SHAPES: dict[str, Callable[[int], str]] = {
    "blanks-inside-title": lambda n: "## a" + " " * n + "b\n",
    "blanks-after-hash": lambda n: "#" + " " * n + "b\n",
    "hash-run": lambda n: "#" * n + "\n",
    "many-headings": lambda n: "## x\n" * (n // 5),
    "cr-run": lambda n: "## a" + "\r" * n + "b\n",
    "prefix-repeated": lambda n: "## " * (n // 3) + "\n",
    "after-front-matter": lambda n: _fm("k: v") + "## a" + " \t" * (n // 2) + "b\n",
}


@pytest.mark.parametrize("shape", sorted(HEADING_SHAPES))
def test_section_lookup_is_linear(shape: str) -> None:
    assert_linear(lambda t: formats.section(t, "a"), HEADING_SHAPES[shape])


LOG_SHAPES: dict[str, Callable[[int], str]] = {
    "blanks-in-client": lambda n: _log(n, "## 2025-01-01 00:00 · b · c" + " " * n + "d\n"),
    "blanks-in-branch": lambda n: _log(n, "## 2025-01-01 00:00 · b" + " " * n + "x · c\n"),
    "dot-runs": lambda n: _log(n, "## 2025-01-01 00:00 · " + "· " * (n // 2) + "\n"),
    "many-entries": lambda n: _log(n, "## 2025-01-01 00:00 · main · cli\ntext\n\n" * (n // 40)),
    "hash-run": lambda n: _log(n, "#" * n + "\n"),
}


@pytest.mark.parametrize("shape", sorted(LOG_SHAPES))
def test_log_parse_is_linear(shape: str) -> None:
    assert_linear(formats.parse_log, LOG_SHAPES[shape])


@pytest.mark.parametrize("shape", ["blanks-in-client", "many-entries"])
def test_log_insert_is_linear(shape: str) -> None:
    entry = formats.LogEntry(when=datetime(2026, 1, 1, tzinfo=UTC), branch="main", client="cli", text="t")
    assert_linear(lambda t: formats.insert_log_entry(t, "p", entry), LOG_SHAPES[shape])


ESCAPE_SHAPES: dict[str, Callable[[int], str]] = {
    "backslash-run-then-hash": lambda n: "\\" * n + "# x",
    "indent-and-backslashes": lambda n: "   " + "\\" * n + "---",
    "many-heading-lines": lambda n: "# x\n" * (n // 4),
    "many-setext-lines": lambda n: "x\n===\n" * (n // 6),
    "thematic-break": lambda n: "* " * (n // 2),
    "long-dash-line": lambda n: "-" * n,
    "bracket-run": lambda n: "[" + "]" * n,
    "backtick-run": lambda n: "`" * n,
    "cr-run": lambda n: "\r" * n,
    "mixed-boundaries": lambda n: "\u2028#\x85#\r\n#\x0b" * (n // 8),
    "nested-containers": lambda n: "> - 1. " * (n // 7) + "[r]: /u",
    "digit-runs": lambda n: "123456789 " * (n // 10),
    "open-label-escapes": lambda n: "[" + "\\]" * (n // 2),
    "blank-run-then-quote": lambda n: " " * n + "> [r]: /u",
}


@pytest.mark.parametrize("shape", sorted(ESCAPE_SHAPES))
def test_escape_round_trip_is_linear(shape: str) -> None:
    assert_linear(lambda t: formats.unescape_lines(formats.escape_lines(t)), ESCAPE_SHAPES[shape])


BLOCK_SHAPES: dict[str, Callable[[int], str]] = {
    "newline-run": lambda n: "\n" * n + "x",
    "newline-run-after": lambda n: "x" + "\n" * n,
    "blank-lines": lambda n: "x" + "\n \t" * (n // 3) + "y",
    "blank-lines-at-both-ends": lambda n: " \n" * (n // 4) + "x" + "\n " * (n // 4),
}


@pytest.mark.parametrize("shape", sorted(BLOCK_SHAPES))
def test_append_under_heading_is_linear(shape: str) -> None:
    note = "# t\n\n## Proposed\n\nold\n"

    def append(block: str) -> None:
        formats.append_under_heading(note, "Proposed", block, title="t")

    assert_linear(append, BLOCK_SHAPES[shape])


FENCE_SHAPES: dict[str, Callable[[int], str]] = {
    "backticks": lambda n: "`" * n,
    "tildes": lambda n: "~" * n,
    "many-short-runs": lambda n: "` ~ " * (n // 4),
    "cr-run": lambda n: "\r" * n,
    "boundaries": lambda n: "\u2029\n" * (n // 2),
}


@pytest.mark.parametrize("shape", sorted(FENCE_SHAPES))
def test_fence_and_unfence_are_linear(shape: str) -> None:
    def both(text: str) -> None:
        fence.unfence(fence.fence_untrusted(text, label="x", source="s.md"))

    assert_linear(both, FENCE_SHAPES[shape])


def _handoff(n: int) -> str:
    return _fm("project: p\nbranch: main" + " " * n + "\nwritten: 2026-01-01T00:00:00Z\nsession: s\nclient: c")


def _summary(n: int) -> str:
    block = formats.SESSIONS_START + "\n" + "- [[s/p/x]] — 2026-01-01 — y\n" * (n // 30) + formats.SESSIONS_END
    return "# p\n\n## Recent sessions\n" + block + "\n"


NOTE_PARSERS: dict[str, tuple[Callable[[str], object], Callable[[int], str]]] = {
    "handoff": (formats.Handoff.parse, _handoff),
    "session-note": (formats.SessionNote.parse, lambda n: _fm("project: p") + "# t\n\n" + "- b\n" * (n // 4)),
    "summary-parse": (formats.ProjectSummary.parse, _summary),
    "sessions-block": (lambda t: formats.rebuild_sessions_block(t, [], cap=1 << 22), _summary),
    "held-table": (held.parse_held, lambda n: "| " + "a \\| " * (n // 5) + "|\n"),
    "held-pipes": (held.parse_held, lambda n: "| a | " + "| " * (n // 2) + "\n"),
    "held-backslashes": (held.parse_held, lambda n: "| " + "\\" * n + " |\n"),
    "held-many-rows": (held.parse_held, lambda n: ("| a | " + "0" * 40 + " | r | v | 2026-01-01 |\n") * (n // 70)),
    "clean-reason": (held.clean_reason, lambda n: "a \x00" * (n // 3)),
    "check-inline": (lambda t: lines.check_inline(t, "x"), lambda n: "a" * n),
    "line-endings": (formats.normalize_line_endings, lambda n: "\r\n\r" * (n // 3)),
}


@pytest.mark.parametrize("name", sorted(NOTE_PARSERS))
def test_note_parsers_are_linear(name: str) -> None:
    fn, build = NOTE_PARSERS[name]
    assert_linear(fn, build)


def test_the_ratio_catches_a_quadratic_parser() -> None:
    """The measuring stick itself, at this file's sizes: a deliberately quadratic scan fails the bound."""
    assert_catches_quadratic(lambda n: "y" * n)
