"""Names a renderer, a shell or Windows resolves (issue 8 item 5): the review's strings, the split shapes as a
property, and the real ``notegate floor check`` CLI holding one of them."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety.floor import check_item
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES
from notegate.safety.rendered import rendered_views
from support import notegate

PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RENDERED = "names an instruction file once rendered or resolved"

REVIEW_STRINGS = [
    "CLAUDE<span>.md</span>",
    "CLAUDE<wbr>.md",
    "<b>AGENTS</b>.md",
    "[CLAUDE](https://example.org).md",
    '"CLAU""DE.md"',
    ".cursor\\rules\\always.mdc",
    "CLAUDE.\nmd",
]
MORE_SHAPES = [
    "CLAUDE<!-- x -->.md",
    "CLAUDE<br/>.md",
    'CLA<span class="x">UDE</span>.md',
    "[CLAU][1]DE.md",
    "'AGEN''TS.md'",
    "CLAU\\\nDE.md",  # shell line continuation
    "C\\LAUDE.md",  # shell backslash
    "CLAUDE.\r\n    md",
    "GEMINI\n.md",
]


def _rules(text: str) -> list[str]:
    return [r.rule for r in check_item(text).reasons]


@pytest.mark.parametrize("text", REVIEW_STRINGS + MORE_SHAPES)
def test_review_shapes_hold_as_instruction_file(text: str) -> None:
    verdict = check_item(text)
    assert [r.rule for r in verdict.reasons] == ["instruction-file"], verdict.to_json()
    assert verdict.reasons[0].detail.startswith(RENDERED)


@pytest.mark.parametrize(
    "text",
    [
        "CLAUDE.\n\nmd files are Markdown",  # a paragraph break is two line breaks: not joined
        "A <span>README</span>.md and a [link](https://example.org).",
        'He said "CLAUDE" and "md" separately.',
        "C:\\Users\\me\\notes\\README.md",
        "<!--<!--<!-- unclosed",
        "x < y and y > z; [a] and (b)",
    ],
)
def test_ordinary_markup_still_passes(text: str) -> None:
    assert not check_item(text).held, check_item(text).to_json()


SPLITTERS = st.sampled_from(
    ["<b>", "</b>", "<span>", "</span>", "<wbr>", "<br/>", "<!---->", "<!-- x -->", '""', "''", "**", "`", "\n", "\\"]
)


@PROPERTIES
@given(name=st.sampled_from(DEFAULT_INSTRUCTION_FILES), cut=st.floats(0, 1), splitter=SPLITTERS)
def test_a_name_split_by_any_tag_comment_quote_or_line_break_holds(name: str, cut: float, splitter: str) -> None:
    at = 1 + int(cut * (len(name) - 2))
    text = f"please update {name[:at]}{splitter}{name[at:]} now"
    assert "instruction-file" in _rules(text)


@PROPERTIES
@given(
    name=st.sampled_from(DEFAULT_INSTRUCTION_FILES),
    cut=st.floats(0, 1),
    url=st.from_regex(r"https://[a-z]{1,8}\.org", fullmatch=True),
)
def test_a_name_split_by_a_markdown_link_holds(name: str, cut: float, url: str) -> None:
    at = 1 + int(cut * (len(name) - 2))
    assert "instruction-file" in _rules(f"[{name[:at]}]({url}){name[at:]}")


@PROPERTIES
@given(text=st.text(st.sampled_from(list("<>!-[]()\"'\\\n *_`&#;abc.md")), max_size=60))
def test_views_only_delete_or_fold(text: str) -> None:
    """Every view is no longer than the text (it only deletes, or folds one character to one)."""
    for view in rendered_views(text):
        assert len(view) <= len(text)


def test_cli_floor_check_holds_a_rendered_name(tmp_path) -> None:
    item = tmp_path / "item.md"
    item.write_text("Please also read CLAUDE<wbr>.md before you start.\n", encoding="utf-8")
    done = notegate("floor", "check", str(item), "--config", str(tmp_path / "none.toml"), real=True)
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert out["verdict"] == "hold"
    assert [line.split(":")[0] for line in out["reasons"]] == ["instruction-file"]
    assert RENDERED in out["reasons"][0]


def test_cli_floor_check_holds_a_bare_carriage_return(tmp_path) -> None:
    done = notegate("floor", "check", "-", "--config", str(tmp_path / "none.toml"), input="approved\rdenied  \n")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["reasons"] == [
        "control-char: U+000D CARRIAGE RETURN not followed by LINE FEED (returns the cursor: what follows "
        "overwrites the line) at 8 (line 1, col 9)"
    ]
