"""The cheaper credential scan and floor give exactly the old findings (oracle: ``_old_gates.py``, the frozen old code).

What changed is how the joined view is built (one substitution, breakpoints on demand) and how base64
pieces are found (``str.find`` on a mask); the properties below pin the new pieces to the old ones on
hostile texts: every credential shape of the corpus, split by the line breaks, list and quote markers,
trailing blanks and CRs that the joined view removes, invisible and look-alike characters, fences, front
matter, encoded runs and long lines.  The linear-time tests cover the new scanners.
"""

from __future__ import annotations

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety import secrets
from notegate.safety.floor import check_item
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES, name_hits, normalise_names
from notegate.safety.rendered import rendered_views
from notegate.safety.secrets import scan_credentials
from notegate.safety.textview import joined, normalise, rendered
from support import floor_corpus, gate_corpus
from support.old_gates import (
    old_encoded_blocks,
    old_joined,
    old_name_hits,
    old_rendered_views,
    old_scan_credentials,
)
from support.timing import assert_linear, fill

_CORPUS_TEXTS = [t for _, t, _, _ in gate_corpus.CREDENTIALS] + [t for _, t in gate_corpus.CREDENTIAL_NEAR_MISSES]
_TOKENS = [v for _, _, _, v in gate_corpus.CREDENTIALS]

#: Markdown structure, break shapes, prefixes, invisible and look-alike characters, encoded and long runs.
_SHAPES = [
    "---\ntitle: x\ntags: [a]\n---\n", "```sh\n", "```\n", "> ", "- ", "* ", "12. ", "3) ", "  ", "\t", " \n", "\t\n",
    "\r\n", "\r", "\n\n", "\n> > ", "\n- ", "==", "=", "ghp_", "sk-", "eyJ", "AKIA", "hooks.slack.com", "password: ",
    "password:\n  ", "\u200b", "\u202e", "\u2066", "\ufeff", "\u0430", "\uff47\uff48\uff50\uff3f", "&#95;", "\\_",
    "<!-- -->", "QUJDRGVmZ2g0NTY3", "0123456789abcdef" * 3, "a" * 70, " " * 70, "MIIBOgIBAAJBAK" + "x" * 30,
    "+/+/+/+/+/+/+/+/+/", "-_-_-_-_-_-_-_-_-_", "é", "日本語", "\U0001f600",
]  # fmt: skip

#: Pieces of hostile text: tokens whole, cut in two, look-alike and invisible spellings, and Markdown.
_FRAGMENTS = st.one_of(
    st.sampled_from(_CORPUS_TEXTS),
    st.sampled_from(_TOKENS),
    st.sampled_from(_TOKENS)
    .flatmap(lambda t: st.integers(0, len(t)).map(lambda i: (t[:i], t[i:])))
    .map(lambda pair: pair[0] + "\n" + pair[1]),
    st.sampled_from(_TOKENS).map(gate_corpus.fullwidth),
    st.sampled_from(_TOKENS).map(gate_corpus.zw_split),
    st.sampled_from(_TOKENS).map(lambda t: base64.b64encode(f"token = {t}".encode()).decode()),
    st.sampled_from(_SHAPES),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.text(alphabet="aZ09+/_-= \t\n\r>*.)", max_size=40),
)
_HOSTILE = st.lists(_FRAGMENTS, max_size=14).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_HOSTILE)
def test_the_credential_scan_finds_exactly_what_the_old_scan_found(text: str) -> None:
    assert scan_credentials(text) == old_scan_credentials(text)


@settings(max_examples=400, deadline=None)
@given(_HOSTILE)
def test_the_joined_view_has_the_old_text_and_maps_every_position_back_the_same_way(text: str) -> None:
    shown = rendered(normalise(text))
    new, old = joined(shown), old_joined(shown)
    assert new.text == old.text
    assert (new is shown) == (old is shown)
    spans = [(i, j) for i in range(len(new.text) + 1) for j in (i, i + 1, len(new.text)) if j <= len(new.text)]
    assert [new.span(i, j) for i, j in spans] == [old.span(i, j) for i, j in spans]


@settings(max_examples=400, deadline=None)
@given(_HOSTILE)
def test_base64_pieces_are_the_old_pieces(text: str) -> None:
    view = rendered(normalise(text))
    assert list(secrets._encoded_blocks(view)) == list(old_encoded_blocks(view.text))


def test_every_corpus_text_gets_the_old_findings() -> None:
    texts = [t for _, t, _, _ in gate_corpus.CREDENTIALS] + [t for _, t in gate_corpus.CREDENTIAL_NEAR_MISSES]
    texts += [t for _, t in gate_corpus.LEGITIMATE]
    texts += [case.text for case in floor_corpus.HOSTILE + floor_corpus.LEGIT]
    texts += ["\n".join(texts), "\r\n".join(texts), " \n".join(texts)]
    for text in texts:
        assert scan_credentials(text) == old_scan_credentials(text), text[:80]


def test_a_token_split_over_lines_is_found_by_the_lazy_joined_view_at_its_original_place() -> None:
    token = gate_corpus.GITHUB_PAT
    text = f"Next step:\n{token[:10]}\n  - {token[10:]} end"
    findings = scan_credentials(text)
    assert [(f.kind, f.start, f.end) for f in findings] == [("github-token", 11, len(text) - 4)]


@pytest.mark.parametrize(
    "unit", ["a\nb", "ab\n- c ", "word\n> ", "QUJDRGVmZ2g0NTY3QUJD ", "QUJDRGVmZ2g0NTY3\n", "a" * 15 + " "]
)
def test_the_fast_joined_view_and_the_piece_finder_grow_linearly(unit: str) -> None:
    assert_linear(scan_credentials, lambda n: fill(unit, n))


_NAMES = normalise_names(DEFAULT_INSTRUCTION_FILES)
#: The floor's pieces: instruction-file names in look-alike and split spellings, markup, dots and breaks.
_FLOOR_SHAPES = [
    "CLAUDE.md", "AGENTS.md", ".cursor/rules", ".cursorrules", "CLAUDE\\.md", "CLAUDE&#46;md", "CLAUDE<!-- -->.md",
    "**CLAUDE**.md", "CLAUDE<wbr>.md", "[CLAUDE](https://example.org).md", '"CLAU""DE.md"', ".cursor\\rules",
    "CLAUDE.\nmd", "CLAUDE.\r\nmd", "CLAUDE.\n\nmd", "C\u200bLAUDE.md", "\uff23LAUDE.md", "CLAUDE\u2024md",
    "CLAUDE\uff0emd", "c1aude.rnd", "agents.MD", ". ", ".", "\x00", "\x7f", "\x1b[0m", "*", "_", "`", "~", "[", "]",
    "'", '"', "\\", "&amp;", "<b>", "\n", "\r\n", "\r", "\t", "  ", "é", "\u0430", "\U0001f600",
]  # fmt: skip
_FLOOR_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_FLOOR_SHAPES),
        st.sampled_from([c.text for c in floor_corpus.HOSTILE + floor_corpus.LEGIT]),
        st.text(max_size=12),
        st.text(alphabet="CLAUDE.md\n\r \x00*_[]'\"", max_size=20),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(_FLOOR_TEXT)
def test_the_floors_rendered_views_and_name_search_are_the_old_ones(text: str) -> None:
    assert rendered_views(text) == old_rendered_views(text)
    assert name_hits(text, _NAMES) == old_name_hits(text, _NAMES)
    reader, shell = rendered_views(text)
    assert name_hits(f"{reader}\n\n{shell}", _NAMES) == old_name_hits(f"{reader}\n\n{shell}", _NAMES)


def test_every_floor_corpus_case_gets_the_old_name_hits_and_views() -> None:
    for case in floor_corpus.HOSTILE + floor_corpus.LEGIT:
        for text in (case.text, case.path or ""):
            assert rendered_views(text) == old_rendered_views(text), case.id
            assert name_hits(text, _NAMES) == old_name_hits(text, _NAMES), case.id


@pytest.mark.parametrize("unit", ["a.b ", ".\n", "C.m", "*_[", "\n \n", "x\ny"])
def test_the_cheaper_floor_passes_grow_linearly(unit: str) -> None:
    assert_linear(lambda t: check_item(t, path="rules/x.md"), lambda n: fill(unit, n))
