"""No credential reaches git history: the credential gate on every write, before anything is committed."""

from __future__ import annotations

import pytest

from notegate.errors import GateRejected
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from support import assert_refused
from support.callers import make_caller

# Assembled at run time so the repository itself holds no credential-shaped literal.
GITHUB = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "Z7QK3M9X2B4N6P8R"
PRIVATE_KEY = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
SPLIT = "gh\u200bp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # zero-width split
PHONE = make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")
HOSTED_TRUSTED = make_caller(tier="trusted", client_class="hosted", login="owner", client="claude-ai")
OWNER = make_caller(login="owner")


@pytest.mark.parametrize("secret", [GITHUB, AWS, PRIVATE_KEY, SPLIT, f"password = {'Xk9' + '#mP2$vL8q'}"])
def test_restricted_inbox_write_with_credential_refused(notes: NotesService, runtime: Runtime, secret: str) -> None:
    head = runtime.environment(None).store.head()
    with pytest.raises(GateRejected) as info:
        InboxService(notes).inbox_write(PHONE, "log", f"deployed with\n{secret}\n", project="p")
    text = info.value.explain()
    assert info.value.rule == "credential-found" and "line 2" in text
    assert secret not in text and secret[4:20] not in text  # kind and position, never the value
    assert runtime.environment(None).store.head() == head


def test_hosted_trusted_refused_even_with_allow_secret(notes: NotesService) -> None:
    for confirmed in (False, True):
        with pytest.raises(GateRejected) as info:
            notes.write_note(HOSTED_TRUSTED, "n.md", GITHUB, "absent", confirmed=confirmed, allow_secret=True)
        assert info.value.rule == "credential-found"


def test_trusted_is_warned_then_may_insist(notes: NotesService, runtime: Runtime) -> None:
    with pytest.raises(GateRejected) as info:
        notes.write_note(OWNER, "ops.md", f"key: {AWS}\n", "absent", confirmed=True)
    assert info.value.rule == "credential-warning" and "allow_secret=true" in info.value.explain()
    assert runtime.environment(None).store.blob_id("ops.md") == "absent"
    done = notes.write_note(OWNER, "ops.md", f"key: {AWS}\n", "absent", confirmed=True, allow_secret=True)
    assert done.status == "committed"


def test_append_scans_the_new_text(notes: NotesService) -> None:
    rev = notes.write_note(OWNER, "a.md", "clean\n", "absent", confirmed=True).new_revision
    assert_refused("credential-warning", notes.append_note, OWNER, "a.md", f"token {GITHUB}", rev, confirmed=True)


def test_ordinary_technical_text_passes(notes: NotesService) -> None:
    text = "Release 1.2.3 on 2026-11-30 at 09:30; commit 3f2a9c1d; see https://example.com/docs?page=2\n"
    assert InboxService(notes).inbox_write(PHONE, "log", text, project="p").status == "committed"


def test_notegate_tokens_and_handles_are_credentials(notes: NotesService, vault) -> None:
    """A restricted session must not be able to publish a live bearer token (every reader could use it)."""
    from support import mint

    token = mint(vault, name="owner-phone", tier="trusted")
    import secrets

    for text in (f"Server token for the owner's phone: {token}", f"handle ngs_{secrets.token_urlsafe(32)}"):
        with pytest.raises(GateRejected) as info:
            InboxService(notes).inbox_write(PHONE, "capture", text, title="setup")
        assert "notegate" in info.value.message and token not in info.value.explain()
