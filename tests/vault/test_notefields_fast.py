"""The fast paths a search takes for each hit give exactly what the plain definitions give (hypothesis).

Why: a hit's part (``part_of``), the headings and the front matter's end are read for each of a search's
hits, so they take shortcuts (parts read lazily, a literal-prefixed heading pattern, ``str.find`` for the
closing delimiter); each shortcut is checked here against the definition it replaces, over texts made of the
characters that matter to it (delimiters, ``#``, newlines, carriage returns, spaces, tags, aliases).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.frontmatter import front_matter_end
from notegate.vault.notefields import (
    _HEADING,
    _a_heading_holds,
    _headings,
    _tag_list,
    _tags,
    matched_part,
    note_fields,
    part_of,
    properties,
)
from notegate.vault.query import hit_pattern

PIECES = st.sampled_from(
    ["---", "\n", "\r", " ", "\t", "#", "##", "# ", "aliases: ", "alias:", "tags: ", "Tag:", "- ", "[", "]", ", ",
     "lang: en", "word", "Word", "other", "the", "é", "東京", "#word", "x#y", "(#tag", "###### h", "####### no",
     "'", '"', ":", ",", "wordy", "_", "\u0301"]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def reference_front_matter_end(text: str) -> int:
    """The definition: just after the first later line that is exactly ``---``, when the text opens with one."""
    if not text.startswith("---\n"):
        return 0
    pos = 4
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos:nl]
        if line == "---":
            return len(text) if nl == -1 else nl + 1
        if nl == -1:
            break
        pos = nl + 1
    return 0


@settings(max_examples=400)
@given(TEXTS)
def test_front_matter_end_is_its_definition(text: str) -> None:
    assert front_matter_end(text) == reference_front_matter_end(text)
    assert front_matter_end("---\n" + text) == reference_front_matter_end("---\n" + text)


@settings(max_examples=400)
@given(TEXTS)
def test_headings_are_the_multiline_patterns_headings(body: str) -> None:
    assert _headings(body) == "\n".join(_HEADING.findall(body))


@settings(max_examples=400)
@given(
    TEXTS,
    st.lists(st.sampled_from(["word", "the", "other", "tag", "h", "東京", "é", "wor*"]), min_size=1, max_size=3),
    st.sampled_from(["notes/word.md", "the other.md", "a/b/x.canvas", "plain.md"]),
)
def test_part_of_is_matched_part_of_note_fields(text: str, words: list[str], path: str) -> None:
    # The front matter's aliases and tags are read only when a hit is somewhere in it: front matters that
    # open on an alias or a tag list, whatever the pieces after.
    for body in (text, "---\n" + text, "---\naliases: " + text, "---\ntags: [" + text):
        pattern = hit_pattern(words)
        assert part_of(path, body, pattern) == matched_part(note_fields(path, body), pattern)
    assert part_of(path, text, None) == "body"


@settings(max_examples=400)
@given(TEXTS, st.lists(st.sampled_from(["word", "the", "h", "tag", "東京", "é", "wor*", "y"]), min_size=1, max_size=3))
def test_the_headings_and_tags_looked_at_one_by_one_are_the_joined_ones(text: str, words: list[str]) -> None:
    """part_of's early exits: a heading (a tag) at a time, stopping at the first holding a hit, answers as the
    search over all of them joined does."""
    pattern = hit_pattern(words)
    joined = _headings(text)
    assert ("#" in text and _a_heading_holds(text, pattern)) == bool(joined and pattern.search(joined))
    for body in (text, "---\n" + text):
        end = front_matter_end(body)
        props = properties(body, end) if end else {}
        tags = _tags(props, body[end:])
        one_by_one = any(pattern.search(tag) is not None for tag in _tag_list(props, body[end:]))
        assert one_by_one == bool(tags and pattern.search(tags))


def test_a_heading_found_only_on_a_line_of_its_own() -> None:
    body = "intro # not a heading\n## Real one ##\n#nospace\n\n# Top\n"
    assert _headings(body) == "Real one\nTop"
    assert part_of("n.md", "---\ntags: [x]\n---\n" + body, hit_pattern(["real"])) == "heading"
    assert part_of("n.md", "---\naliases: [Real]\n---\n" + body, hit_pattern(["real"])) == "alias"
