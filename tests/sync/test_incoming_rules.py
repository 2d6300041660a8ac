"""The git door's pure decisions: every spelling of a hidden path, attachment signatures, the pusher."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.policy import (
    HIDDEN_SHORT_NAMES,
    Decision,
    Policy,
    decide_attachment,
    decide_incoming_note,
    decide_incoming_path,
    decide_push,
    identify_pusher,
    is_hidden_segment,
)
from notegate.safety.attachments import SIGNATURES
from support.gitstreams import PNG

POLICY = Policy()
HIDDEN = [".obsidian", ".git", ".claude", ".mcp.json", ".trash", ".github", ".cursor", ".vscode"]
DOTS = [".", "\uff0e", "\ufe52", "\u2024"]  # full stop, fullwidth, small, one dot leader: all NFKC '.'


def _cased(draw, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.upper() if f else c for c, f in zip(text, flips, strict=True))


@st.composite
def hidden_spellings(draw) -> str:
    name = draw(st.sampled_from(HIDDEN))
    body = _cased(draw, name[1:])
    dot = draw(st.sampled_from(DOTS))
    lead = draw(st.sampled_from(["", " ", "  "]))
    tail = draw(st.sampled_from(["", ".", " ", ". .", "::$DATA", ":stream"]))
    return lead + dot + body + tail


@st.composite
def short_names(draw) -> str:
    long = draw(st.sampled_from(HIDDEN_SHORT_NAMES)).lstrip(".")
    stem, _, ext = long.rpartition(".") if "." in long else (long, "", "")
    stem = "".join(c for c in stem if c.isalnum())
    short = stem[: draw(st.integers(1, min(6, len(stem))))] + "~" + str(draw(st.integers(1, 9)))
    if ext and draw(st.booleans()):
        short += "." + ext[: draw(st.integers(1, 3))]
    return _cased(draw, short)


@given(segment=st.one_of(hidden_spellings(), short_names()), where=st.sampled_from(["", "notes/", "a/b/"]))
def test_every_spelling_of_a_hidden_segment_is_refused_as_hidden(segment: str, where: str) -> None:
    assert is_hidden_segment(segment)
    for path in (f"{where}{segment}/x.md", f"{where}{segment}"):
        assert decide_incoming_path(POLICY, path).rule == "incoming-hidden-path", path


@given(st.text(min_size=1, max_size=40))
def test_any_segment_gets_a_decision_and_a_dot_start_is_always_hidden(segment: str) -> None:
    decision = decide_incoming_path(POLICY, f"notes/{segment}.md")  # never raises, whatever the text
    assert decision.rule
    if segment.startswith("."):
        assert decision.rule == "incoming-hidden-path"


@pytest.mark.parametrize("name", ["notes.md", "git.md", "obsidian.md", "my.claude.md", "v~1.md", "x/gitlab/y.md"])
def test_ordinary_names_are_not_hidden(name: str) -> None:
    assert decide_incoming_path(POLICY, name).rule == "incoming-note"


def test_gitmodules_is_a_submodule_in_any_case() -> None:
    for name in (".gitmodules", ".GitModules", "sub/.gitmodules. "):
        assert decide_incoming_path(POLICY, name).rule == "incoming-submodule"


GOOD_HEADS = {
    "a.png": PNG,
    "a.jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF",
    "a.jpeg": b"\xff\xd8\xff\xdb",
    "a.gif": b"GIF89a\x01\x00",
    "a.webp": b"RIFF\x10\x00\x00\x00WEBPVP8 ",
    "a.pdf": b"%PDF-1.4\n",
    "a.mp3": b"ID3\x04\x00",
    "b.mp3": b"\xff\xfb\x90\x00",
    "a.m4a": b"\x00\x00\x00\x20ftypM4A ",
    "a.ogg": b"OggS\x00\x02",
    "a.wav": b"RIFF\x24\x00\x00\x00WAVEfmt ",
    "a.canvas": b'\xef\xbb\xbf \n{"nodes": []}',
}


@pytest.mark.parametrize(("name", "head"), GOOD_HEADS.items())
def test_each_attachment_type_is_accepted_by_its_signature_and_nothing_else(name: str, head: bytes) -> None:
    assert decide_attachment(POLICY, name, head, len(head)).rule == "incoming-attachment"
    assert decide_attachment(POLICY, name, b"<script>alert(1)</script>", 25).rule == "attachment-type-mismatch"
    assert decide_attachment(POLICY, name, head, POLICY.max_attachment_bytes + 1).rule == "attachment-too-large"


def test_the_default_types_are_exactly_the_checked_ones() -> None:
    assert {media for _, media in POLICY.attachment_types} == set(SIGNATURES)
    assert decide_attachment(POLICY, "x.html", b"<html/>", 7).rule == "file-type-refused"
    assert decide_attachment(POLICY, "x.svg", b"<svg/>", 6).allowed  # kept; the console shows it as <img> only
    assert decide_attachment(POLICY, "x", b"\x89PNG", 4).rule == "file-type-refused"


@pytest.mark.parametrize(
    ("values", "pusher"),
    [
        ({}, None),
        ({"GL_USERNAME": "alice"}, "alice"),
        ({"GITEA_PUSHER_NAME": "bob"}, "bob"),
        ({"REMOTE_USER": "carol"}, "carol"),
        ({"NOTEGATE_PUSHER": "owner", "GL_USERNAME": "owner"}, "owner"),
        ({"NOTEGATE_PUSHER": "owner", "GL_USERNAME": "mallory"}, None),
        ({"NOTEGATE_PUSHER": "   "}, None),
        ({"USER": "owner"}, None),  # the local account is not a forge identity
    ],
)
def test_the_pusher_is_whoever_the_forge_names_and_only_unambiguously(values: dict, pusher: str | None) -> None:
    assert identify_pusher(values) == pusher


def test_decide_push() -> None:
    assert decide_push(POLICY, ("owner",), "owner", "rules/x.md").allowed
    assert decide_push(POLICY, ("owner",), "bob", "notes/x.md").allowed
    for pusher in ("bob", None):
        for path in ("rules/x.md", "rules/digest.md", "handoffs/p.md", "Log/p.md", "design/p.md", "projects/p.md"):
            assert decide_push(POLICY, ("owner",), pusher, path).rule == "push-protected-path"


def test_decide_push_names_the_area_the_path_falls_in() -> None:
    """Not a fixed list: the protected glob, the digest or the folder that holds the path."""
    for path, area in (
        ("rules/x.md", "rules/**"),
        ("projects/p.md", "projects/"),
        ("Projects/p.md", "projects/"),
        ("HANDOFFS/p.md", "handoffs/"),
        ("design/p.md", "design/"),
    ):
        decision = decide_push(POLICY, ("owner",), "bob", path)
        assert (decision.rule, decision.reason) == (
            "push-protected-path",
            f"sessions load {area} (in any case) at start; 'bob', who is not the owner, may not change it.",
        )
    custom = Policy(routes=(("handoff", "team/{project}.md"),), protected=("house/**",))
    assert "sessions load team/ " in decide_push(custom, ("owner",), None, "Team/p.md").reason
    assert "sessions load house/** " in decide_push(custom, ("owner",), None, "house/r.md").reason


BOM = "\ufeff".encode()


def test_a_leading_bom_is_no_hidden_character_where_sessions_load() -> None:
    """The one function every door's content rules call (server writes, import, pre-receive, the fetch)."""
    assert decide_incoming_note(POLICY, "projects/p.md", BOM + b"# P\n") == Decision(True, "incoming-content", "")
    for data, at in ((BOM + BOM + b"# P\n", "at 1 (line 1, col 2)"), (b"# P\n" + BOM, "at 4 (line 2, col 1)")):
        decision = decide_incoming_note(POLICY, "projects/p.md", data)
        assert (decision.allowed, decision.rule) == (False, "protected-floor-hold")
        assert decision.reason.endswith(f"invisible-char: U+FEFF ZERO WIDTH NO-BREAK SPACE {at}")
