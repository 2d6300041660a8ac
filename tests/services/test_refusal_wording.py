"""The words of the refusals a person or a model meets most, on a real vault: each names its rule exactly and
says what applies to this call and what to do next."""

from __future__ import annotations

import pytest

from notegate.errors import NoSuchNote, NotegateError, PathRejected, PolicyDenied, StaleRevision
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.store import ABSENT
from support.callers import make_caller

PHONE = make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")
HOSTED_TRUSTED = make_caller(tier="trusted", client_class="hosted", login="owner", client="chat-app")
OWNER = make_caller(tier="trusted", client_class="workstation", login="owner", client="laptop")
REVIEWER = make_caller(tier="trusted", client_class="workstation", login="reviewer", client="review")


@pytest.fixture
def notes(rt: Runtime) -> NotesService:
    return NotesService(rt)


@pytest.fixture
def inbox(notes: NotesService) -> InboxService:
    return InboxService(notes)


def test_a_stale_promote_says_the_item_changed_not_the_write_note_words(inbox: InboxService) -> None:
    old = inbox.inbox_write(PHONE, "log", "one", project="p").new_revision
    inbox.inbox_write(PHONE, "log", "two", project="p")
    for call in (
        lambda: inbox.promote_inbox(REVIEWER, "inbox/log/p.md", old),
        lambda: inbox.hold_inbox(REVIEWER, "inbox/log/p.md", old, "x"),
    ):
        with pytest.raises(StaleRevision) as info:
            call()
        text = info.value.explain()
        assert info.value.rule == "stale-revision"
        assert text.startswith(
            "Refused [stale-revision]: inbox/log/p.md: the item changed since you read it; list_inbox again. "
        ), text
        assert "base_revision" not in text and "read_note" not in text


def test_reading_a_deleted_note_points_at_its_history(notes: NotesService) -> None:
    made = notes.write_note(OWNER, "notes/gone.md", "# Gone\n", ABSENT, confirmed=True)
    notes.delete_note(OWNER, "notes/gone.md", made.new_revision, confirmed=True)
    with pytest.raises(NoSuchNote) as info:
        notes.read_note(OWNER, "notes/gone.md")
    assert info.value.rule == "no-such-note"
    assert info.value.explain() == (
        "Refused [no-such-note]: no such note: notes/gone.md. It was deleted: note_history lists its past "
        "versions, and restore_note brings one back (as a trusted session)."
    )
    with pytest.raises(NoSuchNote) as never:
        notes.read_note(OWNER, "notes/never.md")
    assert never.value.explain() == (
        "Refused [no-such-note]: no such note: notes/never.md. Check the path with list_notes or search_notes."
    )


def test_a_private_deleted_note_reads_as_never_there(notes: NotesService) -> None:
    made = notes.write_note(OWNER, "private/gone.md", "# Gone\n", ABSENT, confirmed=True)
    notes.delete_note(OWNER, "private/gone.md", made.new_revision, confirmed=True)
    with pytest.raises(NoSuchNote) as info:
        notes.read_note(PHONE, "private/gone.md")
    assert info.value.rule == "no-such-note" and "deleted" not in info.value.explain()


def test_a_hidden_path_is_refused_without_suggesting_a_rename(notes: NotesService) -> None:
    with pytest.raises(PathRejected) as info:
        notes.read_note(OWNER, ".obsidian/app.json")
    text = info.value.explain()
    assert info.value.rule == "path-hidden-segment"
    assert "rename" not in text.lower() and "drop the leading dot" not in text
    assert text == (
        "Refused [path-hidden-segment]: the segment '.obsidian' starts with '.', which marks hidden files and "
        "folders (.git, .obsidian): they hold each device's settings and are never notes. Leave hidden files "
        "where they are; write notes under visible folders, e.g. notes/idea.md."
    )


def test_a_two_step_refusal_says_it_is_the_client_class(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(HOSTED_TRUSTED, "notes/a.md", "# A\n", ABSENT, confirmed=True)
    assert info.value.rule == "two-step-required"
    assert info.value.explain().startswith(
        "Refused [two-step-required]: this write must be previewed first: your client class (hosted) previews "
        "every write ([policy] two_step_classes). Call write_note with confirmed=false"
    ), info.value.explain()


def test_a_two_step_refusal_says_it_is_the_protected_path(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(OWNER, "rules/new.md", "# New\n", ABSENT, confirmed=True)
    assert info.value.rule == "two-step-required"
    assert info.value.explain().startswith(
        "Refused [two-step-required]: this write must be previewed first: rules/new.md is a protected path "
        "([policy] protected), which every caller previews. Call write_note with confirmed=false"
    ), info.value.explain()


# -- each refusal says what to do once (the message says what and why, the remedy what to do instead)


def test_a_reserved_name_says_choose_another_name_once(notes: NotesService) -> None:
    with pytest.raises(PathRejected) as info:
        notes.write_note(OWNER, "notes/CON.md", "# Con\n", ABSENT, confirmed=True)
    assert info.value.rule == "path-reserved-name"
    assert info.value.explain() == (
        "Refused [path-reserved-name]: The segment 'CON.md' is a reserved name on Windows (CON, PRN, AUX, NUL, "
        "COM1-9, LPT1-9, or git~1, git's short name for .git); clones there cannot check it out. Choose another "
        "name: this one is reserved on Windows or by git."
    )


def test_an_instruction_file_name_says_choose_another_name_once(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(OWNER, "Zettelkasten/claude.md", "# C\n", ABSENT, confirmed=True)
    assert info.value.rule == "instruction-file-name"
    assert info.value.explain() == (
        "Refused [instruction-file-name]: Zettelkasten/claude.md would be taken for the instruction file "
        "'CLAUDE.md' by an agent working in a clone (names are compared ignoring case, look-alike letters and "
        "Windows aliases). Choose another name (for an inbox item, another project name or title)."
    )


def test_a_capture_without_a_route_says_hold_it_once(inbox: InboxService) -> None:
    made = inbox.inbox_write(PHONE, "capture", "an idea", project="p")
    with pytest.raises(PolicyDenied) as info:
        inbox.promote_inbox(REVIEWER, made.path, made.new_revision)
    assert info.value.rule == "no-route"
    assert info.value.explain() == (
        "Refused [no-route]: capture items have no route. Hold it, or move it by hand as a trusted session."
    )


def test_a_restricted_write_outside_the_inbox_names_inbox_write_once(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(PHONE, "notes/x.md", "# X\n", ABSENT, confirmed=True)
    assert info.value.rule == "restricted-outside-inbox"
    text = info.value.explain()
    assert text == (
        "Refused [restricted-outside-inbox]: notes/x.md is outside the inbox, and a restricted session may only "
        "create or append inbox items (kind handoff, log, decision or capture). Use inbox_write(kind, text, "
        "project); a reviewer then promotes or holds it. For anything else, ask the owner for a trusted session."
    )
    assert text.count("inbox_write") == 1


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("attachments/img0.png", "image/png"),
        ("attachments/IMG_0001.JPG", "image/jpeg"),  # cameras write upper case; the type is the same
        ("papers/report.pdf", "application/pdf"),
        ("boards/plan.canvas", "application/json"),
        ("audio/memo.m4a", "audio/mp4"),
    ],
)
def test_read_note_on_an_attachment_points_at_read_attachment(notes: NotesService, path: str, media_type: str) -> None:
    with pytest.raises(PathRejected) as info:
        notes.read_note(OWNER, path)
    assert info.value.rule == "path-not-markdown"
    assert info.value.explain() == (
        f"Refused [path-not-markdown]: {path} is an attachment ({media_type}), not a note: read_note reads "
        f"Markdown notes only. Read it with read_attachment(path='{path}')."
    )


def test_read_note_on_a_file_of_no_attachment_type_still_says_add_md(notes: NotesService) -> None:
    with pytest.raises(PathRejected) as info:
        notes.read_note(OWNER, "notes/idea.txt")
    assert info.value.rule == "path-not-markdown"
    assert "add '.md' to the name" in info.value.explain() and "read_attachment" not in info.value.explain()


@pytest.mark.parametrize(
    ("project", "slug"),
    [
        ("Projets été", "projets-ete"),  # accents folded, spaces to hyphens
        ("Bad Name", "bad-name"),
        ("a/b", "a-b"),
    ],
)
def test_a_bad_project_suggests_the_slug_it_would_accept(inbox: InboxService, project: str, slug: str) -> None:
    with pytest.raises(NotegateError) as info:
        inbox.inbox_write(PHONE, "log", "done today", project=project)
    assert info.value.rule == "bad-project"
    assert info.value.explain() == (
        "Refused [bad-project]: a log item needs a project name made of lowercase letters, digits and hyphens "
        f"('{project}' is not). Pass project='{slug}' (its name as a slug), or the repository's name, lowercased."
    )
    inbox.inbox_write(PHONE, "log", "done today", project=slug)  # and the suggestion is accepted


@pytest.mark.parametrize("project", [None, "", "!!!", "日本語"])
def test_a_project_with_no_slug_gets_no_suggestion(inbox: InboxService, project: str | None) -> None:
    with pytest.raises(NotegateError) as info:
        inbox.inbox_write(PHONE, "log", "done today", project=project)
    assert info.value.rule == "bad-project"
    assert info.value.remedy == "Pass project, e.g. project='notegate' (the repository's name, lowercased)."


# -- a secret's position is given in the text the caller sent, not in the item the server renders around it

AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # built here so no credential-looking literal sits in the repository
CREDENTIAL_FOUND = (
    "Refused [credential-found]: the text contains what looks like a credential: credential (aws-access-key-id) "
    "{where}. Nothing was written. Remove it or replace it with a placeholder such as <API_KEY>: a secret "
    "committed once stays in every clone's history forever."
)


def _refused(call) -> NotegateError:
    with pytest.raises(NotegateError) as info:
        call()
    assert info.value.rule == "credential-found"
    assert AWS_KEY not in info.value.explain()
    return info.value


def test_a_secret_in_a_titled_item_is_placed_in_the_callers_text(inbox: InboxService) -> None:
    # rendered, the item is "# Keys\n\nkey AKIA…": line 3 of the item, line 1 of what the caller sent
    refused = _refused(lambda: inbox.inbox_write(PHONE, "capture", f"key {AWS_KEY}", title="Keys"))
    assert refused.explain() == CREDENTIAL_FOUND.format(where="at line 1, col 5 of your text")


def test_a_secret_appended_to_an_item_is_placed_in_the_callers_text(inbox: InboxService) -> None:
    inbox.inbox_write(PHONE, "log", "first line\nsecond line", project="p")
    refused = _refused(lambda: inbox.inbox_write(PHONE, "log", f"done\nkey {AWS_KEY}", project="p"))
    assert refused.explain() == CREDENTIAL_FOUND.format(where="at line 2, col 5 of your text")


def test_a_secret_appended_to_a_crlf_item_is_placed_in_the_callers_text(
    inbox: InboxService, notes: NotesService
) -> None:
    """The separator and heading an append adds are CRLF in a CRLF item (two bytes a line break): the
    position still counts from what the caller sent."""
    notes.write_note(OWNER, "inbox/captures/keys.md", "# Keys\r\n\r\nOne.\r\n", ABSENT, confirmed=True)
    refused = _refused(lambda: inbox.inbox_write(PHONE, "capture", f"done\nkey {AWS_KEY}", title="Keys"))
    assert refused.explain() == CREDENTIAL_FOUND.format(where="at line 2, col 5 of your text")


def test_a_secret_in_an_untitled_item_keeps_the_scanners_position(inbox: InboxService) -> None:
    refused = _refused(lambda: inbox.inbox_write(PHONE, "log", f"key {AWS_KEY}", project="p"))
    assert refused.explain() == CREDENTIAL_FOUND.format(where="at line 1, col 5")


def test_a_secret_in_an_items_title_is_said_to_be_in_the_item(inbox: InboxService) -> None:
    refused = _refused(lambda: inbox.inbox_write(PHONE, "capture", "nothing secret", title=f"k {AWS_KEY}"))
    assert refused.explain() == CREDENTIAL_FOUND.format(
        where="in the item, before your text (at line 1, col 5 of the item)"
    )


def test_a_secret_appended_to_a_note_is_placed_in_the_appended_text(notes: NotesService) -> None:
    """append_note scans the note's end (the seam) joined to the new text; positions count from the new text."""
    with pytest.raises(NotegateError) as info:
        notes.check_secrets(PHONE, f"three\nx {AWS_KEY}", False, seam="# A\n\none\ntwo\n")
    assert "credential (aws-access-key-id) at line 2, col 3 of your text." in info.value.explain()
    with pytest.raises(NotegateError) as split:  # half at the note's end, half appended: seen whole
        notes.check_secrets(PHONE, AWS_KEY[4:], False, seam="# A\n\nkey " + AWS_KEY[:4])
    assert "credential (aws-access-key-id) where your text joins the end of the note." in split.value.explain()
