"""quoted_blocks: the fenced parts cut back out of a combined text (session_start's ``context``).

Property: whatever the texts and the code sentences between them, each quote comes back whole, in
order, with its label, and nothing else does -- not a fake header inside a quote, not a broken frame.
Linear in the text's size (tests/support/timing.py's ratio, on hostile shapes).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from notegate.vault.fence import fence_untrusted, quoted_blocks, shorten_fenced
from support.timing import assert_catches_quadratic, assert_linear, fill

LABELS = st.sampled_from(["rules digest", "last handoff", "context to resume", "session facts"])
SENTENCES = st.sampled_from(["", "Inbox: 2 items waiting for review.", "No handoff exists yet for this project."])
HEADER = "[notegate: quoted data (last handoff). x]\n"


@given(st.lists(st.tuples(LABELS, st.text(max_size=300), SENTENCES), max_size=5))
def test_every_quote_comes_back_whole_and_in_order(parts: list[tuple[str, str, str]]) -> None:
    quotes = [(label, fence_untrusted(text, label=label)) for label, text, _ in parts]
    combined = "\n\n".join(piece for (_, q), (_, _, s) in zip(quotes, parts, strict=True) for piece in (s, q))
    assert quoted_blocks(combined) == quotes


@given(st.text(max_size=400))
def test_a_quote_of_a_combined_text_hides_what_it_quotes(text: str) -> None:
    """Quoting a text that itself holds quotes yields one quote, never the inner ones."""
    inner = fence_untrusted(text, label="rules digest")
    outer = fence_untrusted(inner + HEADER + "```text\n", label="last handoff")
    assert quoted_blocks("intro\n\n" + outer) == [("last handoff", outer)]


def test_broken_frames_are_dropped_and_cut_quotes_kept() -> None:
    good = fence_untrusted("keep me", label="rules digest")
    cut = shorten_fenced(fence_untrusted("x" * 5_000, label="last handoff"), 700)
    broken = fence_untrusted("a\nb", label="last handoff").replace("> b", "b")
    unclosed = HEADER + "```text\n> a\n"
    text = "\n\n".join([unclosed, broken, good, cut, HEADER])
    assert quoted_blocks(text) == [("rules digest", good), ("last handoff", cut)]


def test_linear_time_on_hostile_shapes() -> None:
    shapes = {
        "unclosed headers": lambda n: fill(HEADER + "```text\n> a\n", n),
        "one long quote": lambda n: fence_untrusted(fill("a\n", n), label="last handoff"),
        "many small quotes": lambda n: fill(fence_untrusted("a", label="last handoff"), n),
        "header lines": lambda n: fill(HEADER, n),
    }
    for build in shapes.values():
        assert_linear(quoted_blocks, build)
    assert_catches_quadratic(shapes["unclosed headers"])
