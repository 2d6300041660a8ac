"""Session labels from callers never reach history verbatim unless they are short, plain and credential-free.

The review sent a credential as the `X-Notegate-Session` header: it was committed as the
`Notegate-Session:` trailer and shown by note_history. The header is the only place a caller names its own
session (gated callers get the hash of their server-minted handle; stdio callers send no headers).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.mcp import SESSION_LABEL, session_label
from support import mcp_http, mint, running, token_secret

pytestmark = pytest.mark.anyio

ANTHROPIC_KEY = "sk-ant-api03-" + "Q7xLm2pV9rT4wZ8cN1bY6hJ3kD5fG0sA"  # shaped like a key, not a real one

#: (label sent, kept verbatim?) — every one not kept becomes "h-" + 16 hex.
CASES = [
    (str(uuid.UUID(int=7)), True),  # what the Claude Code and Codex hooks send
    ("test-session", True),
    ("build.42:step-3", True),
    ("a" * 64, True),
    ("a" * 65, False),  # too long
    ("ngt_0123abcd_c2VjcmV0LXRva2VuLXZhbHVl", False),  # a notegate token: `_` is never in a label
    (ANTHROPIC_KEY, False),  # plain characters, but a credential
    ("two words", False),
    ("x\nNotegate-Tier: trusted", False),  # a trailer injection
    ("caf\u00e9", False),  # not ASCII
    ("ab\u200bcd", False),  # an invisible character
    ("", None),  # nothing sent: "-"
]


@pytest.mark.parametrize(("raw", "kept"), CASES)
def test_labels_are_kept_only_when_plain(raw: str, kept: bool | None) -> None:
    label = session_label(raw)
    if kept is None:
        assert label == "-"
    elif kept:
        assert label == raw
    else:
        assert label.startswith("h-") and len(label) == 18 and raw not in label
        assert label == session_label(raw)  # one session keeps one label


def test_no_header_means_no_label() -> None:
    assert session_label(None) == "-"


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_every_label_is_safe_to_commit(raw: str) -> None:
    label = session_label(raw)
    assert label == "-" or SESSION_LABEL.fullmatch(label)
    assert len(label) <= 64 and "\n" not in label and "_" not in label
    if label not in ("-", raw):
        assert label.startswith("h-")
    if raw and any(not (ch.isascii() and (ch.isalnum() or ch in ".:-")) for ch in raw):
        assert label.startswith("h-")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=40, max_size=48))
def test_a_key_shaped_label_is_hashed(body: str) -> None:
    assert session_label("sk-ant-api03-" + body).startswith("h-")


def _timed(raw: str) -> float:
    started = time.thread_time()
    for _ in range(50):
        session_label(raw)
    return time.thread_time() - started


@pytest.mark.parametrize("unit", ["a", "a-", "\u00e9", "sk-ant-"])
def test_labelling_is_linear(unit: str) -> None:
    """4x the header takes well under 16x the time (length is checked before anything else). The HTTP server
    refuses headers past 16 KiB, so 8 KiB and 32 KiB span the real range (larger sizes measure the machine's
    caches, not the code). CPU time of this thread (other processes on a busy machine do not count), sizes
    alternating, best of 15 each."""
    small = unit * ((8 << 10) // len(unit))
    large = small * 4
    _timed(small), _timed(large)  # warm-up
    smalls, larges = [], []
    for _ in range(15):
        smalls.append(_timed(small))
        larges.append(_timed(large))
    ratio = min(larges) / max(min(smalls), 1e-7)
    assert ratio < 8, ratio


async def test_a_credential_sent_as_the_session_never_reaches_history(vault: Path) -> None:
    token = mint(vault, name="laptop", tier="trusted")
    plain = str(uuid.uuid4())
    with running(vault) as server:
        async with mcp_http(server.url, token, headers={"X-Notegate-Session": token}) as client:
            leaked = await client.call_tool(
                "write_note", {"path": "a.md", "content": "one\n", "base_revision": "absent", "confirmed": True}
            )
            history = await client.call_tool("note_history", {"path": "a.md"})
        async with mcp_http(server.url, token, headers={"X-Notegate-Session": ANTHROPIC_KEY}) as client:
            await client.call_tool(
                "write_note", {"path": "b.md", "content": "two\n", "base_revision": "absent", "confirmed": True}
            )
            key_history = await client.call_tool("note_history", {"path": "b.md"})
        async with mcp_http(server.url, token, headers={"X-Notegate-Session": plain}) as client:
            await client.call_tool(
                "write_note", {"path": "c.md", "content": "three\n", "base_revision": "absent", "confirmed": True}
            )
            plain_history = await client.call_tool("note_history", {"path": "c.md"})
    assert not leaked.is_error
    assert history.structured_content["changes"][0]["session"] == session_label(token)
    assert key_history.structured_content["changes"][0]["session"] == session_label(ANTHROPIC_KEY)
    assert plain_history.structured_content["changes"][0]["session"] == plain  # a hook's session id stays
    repo = pygit2.Repository(str(vault.parent / "origin.git"))
    messages = "\n".join(c.message for c in repo.walk(repo.references["refs/heads/main"].target))
    assert token not in messages and token_secret(token) not in messages and ANTHROPIC_KEY not in messages
    assert f"Notegate-Session: {session_label(token)}" in messages
