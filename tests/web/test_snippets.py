"""Search snippets on the console are plain text with the query's words marked (issue 30 §4)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notegate.doors.web.snippets import plain_snippet
from support.timing import assert_linear, fill
from support.web_notes import unsafe_markup


def test_markdown_becomes_the_text_a_reader_sees_and_the_words_are_marked() -> None:
    shown = plain_snippet("…the **plan** is in [[Roadmap|the roadmap]] and [docs](x.md) `code`…", "plan roadmap")
    assert str(shown) == "…the <mark>plan</mark> is in the <mark>roadmap</mark> and docs code…"


def test_a_snippet_is_escaped_whatever_it_holds() -> None:
    shown = str(plain_snippet("<script>alert(1)</script> **x** & <b>", "script"))
    assert "<script" not in shown and "&lt;<mark>script</mark>&gt;" in shown and "&amp;" in shown


@given(st.text(max_size=80), st.text(max_size=20))
def test_any_snippet_and_query_give_no_markup_but_marks(snippet: str, query: str) -> None:
    shown = str(plain_snippet(snippet, query))
    assert unsafe_markup(shown) == [] or all(p == "tag <mark>" for p in unsafe_markup(shown))
    assert shown.replace("<mark>", "").replace("</mark>", "").count("<") == 0


def test_marking_is_linear() -> None:
    assert_linear(lambda text: plain_snippet(text, "ab abc abcd"), lambda n: fill("[[ab|abc ", n), small=4096)


def test_times_and_sizes_read_as_times_and_sizes() -> None:
    from notegate.doors.web.console import filesize, utc

    assert utc(1_796_000_000.0) == "2026-11-30 00:53Z" and utc(None) == "-"
    assert [filesize(n) for n in (0, 1023, 1024, 5 << 20, 3 << 30)] == [
        "0 bytes",
        "1023 bytes",
        "1.0 KB",
        "5.0 MB",
        "3.0 GB",
    ]
