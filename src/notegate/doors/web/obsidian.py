"""Obsidian's Markdown on top of CommonMark, as markdown-it rules (pure: tokens in, tokens out).

Why its own module: :mod:`notegate.doors.web.render` decides what a note may link to and embed (the safety
of the page); this module only teaches the parser the syntax Obsidian adds, so the console shows a vault
the way Obsidian does instead of a paragraph of pipes or a raw ``[!info]``:

* GFM tables and strikethrough (markdown-it's own rules), footnotes and task lists (mdit-py-plugins),
  ``$math$`` kept as marked text (no script renders it; a reader sees the formula as written);
* callouts, ``> [!type]+ Title`` (foldable ones as ``<details>``: no script needed);
* ``==highlights==``, ``#tags``, ``%% comments %%`` (hidden, inline or as a block), ``^block-ids`` (hidden);
* ``dir="auto"`` on every text block, so an Arabic or Persian paragraph lays out right to left.

Every rule is linear in the text: a closing-delimiter search that fails is remembered for the rest of the
block (``state.env``), so a line of a thousand unclosed ``==`` costs one scan, not a thousand.  Nothing here
emits markup taken from the note: callout titles and types are escaped text, classes come from a fixed set.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

__all__ = ["CALLOUT_TYPES", "obsidian_plugin"]

#: Obsidian's callout types and their aliases (Obsidian help, "Callouts"); any other type shows as a note.
CALLOUT_TYPES = {
    "note": "note",
    "abstract": "abstract",
    "summary": "abstract",
    "tldr": "abstract",
    "info": "info",
    "todo": "todo",
    "tip": "tip",
    "hint": "tip",
    "important": "tip",
    "success": "success",
    "check": "success",
    "done": "success",
    "question": "question",
    "help": "question",
    "faq": "question",
    "warning": "warning",
    "caution": "warning",
    "attention": "warning",
    "failure": "failure",
    "fail": "failure",
    "missing": "failure",
    "danger": "danger",
    "error": "danger",
    "bug": "bug",
    "example": "example",
    "quote": "quote",
    "cite": "quote",
}
_CALLOUT = re.compile(r"\[!([A-Za-z0-9_-]{1,40})\]([+-]?)[ \t]*([^\n]*)")
_TAG = re.compile(r"#([\w/-]{1,200})")
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]{1,64})(?=[ \t]*(?:\n|$))")
#: Blocks whose text direction the browser should take from their first strong character.
_TEXT_BLOCKS = frozenset(
    {"paragraph_open", "heading_open", "list_item_open", "blockquote_open", "th_open", "td_open", "dt_open"}
)


def _closing(state: StateInline, marker: str, start: int) -> int:
    """Where ``marker`` closes after ``start`` in this inline run, or -1; a failed search is remembered, so
    every later opening in the same run answers at once (linear in the run)."""
    key = f"obsidian_no_close_{marker}"
    failed = state.env.get(key)
    if failed is not None and failed[0] is state.src and start >= failed[1]:
        return -1
    end = state.src.find(marker, start, state.posMax)
    if end < 0:
        state.env[key] = (state.src, start)
    return end


def _highlight(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if not state.src.startswith("==", pos) or state.src.startswith("===", pos):
        return False
    end = _closing(state, "==", pos + 2)
    if end <= pos + 2:
        return False
    if not silent:
        state.push("mark_open", "mark", 1)
        old_max = state.posMax
        state.pos, state.posMax = pos + 2, end
        state.md.inline.tokenize(state)
        state.posMax = old_max
        state.push("mark_close", "mark", -1)
    state.pos = end + 2
    return True


def _comment(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if not state.src.startswith("%%", pos):
        return False
    end = _closing(state, "%%", pos + 2)
    if end < 0:
        return False
    state.pos = end + 2  # hidden, as in Obsidian's reading view
    return True


def _tag(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if state.src[pos] != "#" or (pos > 0 and not state.src[pos - 1].isspace()):
        return False
    match = _TAG.match(state.src, pos, state.posMax)
    if match is None or match.group(1).replace("/", "").replace("-", "").replace("_", "").isdigit():
        return False  # "#1" is an issue number, not a tag (Obsidian needs one non-digit)
    if not silent:
        token = state.push("obsidian_tag", "span", 0)
        token.content = match.group(0)
    state.pos = match.end()
    return True


def _block_id(state: StateInline, silent: bool) -> bool:
    pos = state.pos
    if state.src[pos] != "^" or (pos > 0 and not state.src[pos - 1].isspace()):
        return False
    match = _BLOCK_ID.match(state.src, pos, state.posMax)
    if match is None:
        return False
    state.pos = match.end()  # hidden: a block's id is an anchor for embeds, not text
    return True


def _comment_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A ``%%`` that opens a line starts a comment running to the next ``%%`` (or the note's end, as in
    Obsidian); its lines are hidden.  Each line is scanned once."""
    begin = state.bMarks[start_line] + state.tShift[start_line]
    line_end = state.eMarks[start_line]
    if state.sCount[start_line] - state.blkIndent >= 4 or not state.src.startswith("%%", begin):
        return False
    if silent:
        return True
    line = start_line
    close = state.src.find("%%", begin + 2, line_end)
    while close < 0 and line + 1 < end_line:
        line += 1
        close = state.src.find("%%", state.bMarks[line], state.eMarks[line])
    if close >= 0 and state.src[close + 2 : state.eMarks[line]].strip():
        return False  # text after the comment on its closing line: the inline rule hides just the comment
    state.line = line + 1
    return True


def _callouts(state: StateCore) -> None:
    """``> [!type]± Title`` blockquotes become callouts: the first line is the title, the rest the body."""
    tokens = state.tokens
    stack: list[str] = []
    for i, token in enumerate(tokens):
        if token.type == "blockquote_open":
            kind = _callout_of(tokens, i)
            stack.append(kind)
            if kind:
                tokens[i] = _callout_open(tokens, i)
        elif token.type == "blockquote_close":
            kind = stack.pop() if stack else ""
            if kind:
                closing = Token("html_block", "", 0)
                closing.content = "</div></details>\n" if kind == "fold" else "</div></div>\n"
                tokens[i] = closing


def _callout_of(tokens: list[Token], i: int) -> str:
    if i + 2 >= len(tokens) or tokens[i + 1].type != "paragraph_open" or tokens[i + 2].type != "inline":
        return ""
    match = _CALLOUT.match(tokens[i + 2].content)
    if match is None:
        return ""
    return "fold" if match.group(2) else "plain"


def _callout_open(tokens: list[Token], i: int) -> Token:
    inline = tokens[i + 2]
    match = _CALLOUT.match(inline.content)
    assert match is not None
    raw_type, fold, title = match.group(1).lower(), match.group(2), match.group(3).strip()
    kind = CALLOUT_TYPES.get(raw_type, "note")
    shown = html.escape(title or raw_type.capitalize())
    # The title line leaves the paragraph: its children up to the first line break go, the rest stay.
    children = inline.children or []
    cut = next((k for k, child in enumerate(children) if child.type in ("softbreak", "hardbreak")), len(children))
    inline.children = children[cut + 1 :]
    inline.content = inline.content.partition("\n")[2]
    if not inline.children:
        tokens[i + 1].hidden = tokens[i + 3].hidden = True  # an empty paragraph renders nothing
        tokens[i + 1].type = tokens[i + 3].type = "obsidian_hidden"
    opening = Token("html_block", "", 0)
    classes = f'class="callout callout-{kind}" data-callout="{kind}" dir="auto"'
    if fold:
        state = " open" if fold == "+" else ""
        opening.content = f'<details {classes}{state}><summary class="callout-title">{shown}</summary>'
    else:
        opening.content = f'<div {classes}><div class="callout-title">{shown}</div>'
    opening.content += '<div class="callout-body">\n'
    return opening


def _text_direction(state: StateCore) -> None:
    for token in state.tokens:
        if token.type in _TEXT_BLOCKS:
            token.attrSet("dir", "auto")


def obsidian_plugin(md: MarkdownIt) -> None:
    """Teach ``md`` Obsidian's syntax (see the module docstring); the vault's links stay render.py's."""
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin).use(tasklists_plugin)
    # "$5 and $10" is money, not math: no space inside the dollars, no digit outside them (Pandoc's rule).
    md.use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        allow_blank_lines=False,
        double_inline=True,
    )
    md.block.ruler.before("paragraph", "obsidian_comment", _comment_block)
    md.inline.ruler.before("emphasis", "obsidian_comment_inline", _comment)
    md.inline.ruler.before("emphasis", "obsidian_highlight", _highlight)
    md.inline.ruler.before("emphasis", "obsidian_tag", _tag)
    md.inline.ruler.before("emphasis", "obsidian_block_id", _block_id)
    md.core.ruler.push("obsidian_callouts", _callouts)
    md.core.ruler.push("obsidian_dir", _text_direction)
    md.add_render_rule("obsidian_tag", lambda _self, tokens, idx, _opts, _env: _tag_html(tokens[idx].content))
    md.add_render_rule("obsidian_hidden", lambda *_args: "")
    for name in ("math_inline", "math_inline_double", "math_block", "math_block_label"):
        md.add_render_rule(name, _math_html)


def _tag_html(tag: str) -> str:
    return f'<span class="tag">{html.escape(tag)}</span>'


def _math_html(_self: object, tokens: list[Token], idx: int, _options: object, _env: object) -> str:
    """A formula as the text it is (no script typesets it on this page), marked so a reader sees it is math."""
    token = tokens[idx]
    if token.type.startswith("math_block"):
        return f'<pre class="math" dir="ltr">{html.escape(token.content)}</pre>\n'
    return f'<code class="math">{html.escape(token.content)}</code>'
