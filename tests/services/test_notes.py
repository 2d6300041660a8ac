"""The notes service on a real vault: two-step writes, stale bases, content rules, visibility, audit."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import notegate.policy.tally as planner  # the planner asks each file of its Tally
from notegate.config import load_config
from notegate.errors import (
    ContentRejected,
    NoSuchNote,
    NotegateError,
    PolicyDenied,
    StaleRevision,
    UnknownEnvironment,
)
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.lines import line_break_of
from notegate.vault.store import ABSENT
from support import assert_refused, set_policy
from support.callers import make_caller

HOSTED_TRUSTED = make_caller(tier="trusted", client_class="hosted", login="owner", client="claude-ai")


def create(notes: NotesService, caller, path: str, text: str) -> str:
    return notes.write_note(caller, path, text, "absent", confirmed=True).new_revision


def test_two_step_preview_writes_nothing_then_confirm_commits(notes: NotesService, runtime: Runtime) -> None:
    head = runtime.environment(None).store.head()
    preview = notes.write_note(HOSTED_TRUSTED, "ideas/x.md", "# X\nbody\n", "absent")
    assert preview.status == "preview"
    assert "Nothing was written" in preview.message
    assert "+# X" in preview.diff and preview.base_revision == ABSENT
    assert runtime.environment(None).store.head() == head
    done = notes.write_note(HOSTED_TRUSTED, "ideas/x.md", "# X\nbody\n", "absent", confirmed=True)
    assert done.status == "committed" and done.commit and done.new_revision
    assert notes.read_note(HOSTED_TRUSTED, "ideas/x.md").text == "# X\nbody\n"


def test_two_step_class_cannot_confirm_without_preview(notes: NotesService) -> None:
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(HOSTED_TRUSTED, "ideas/y.md", "text\n", "absent", confirmed=True)
    assert info.value.rule == "two-step-required"
    assert "confirmed=false" in info.value.explain()


def test_preview_binds_the_exact_content(notes: NotesService) -> None:
    notes.write_note(HOSTED_TRUSTED, "ideas/z.md", "shown\n", "absent")
    assert_refused(
        "two-step-required", notes.write_note, HOSTED_TRUSTED, "ideas/z.md", "different\n", "absent", confirmed=True
    )


def test_preview_is_single_use_and_expires(vault: Path) -> None:
    from notegate.config import load_config

    now = [1000.0]
    rt = Runtime(load_config(vault), clock=lambda: now[0])
    svc = NotesService(rt)
    svc.write_note(HOSTED_TRUSTED, "ideas/t.md", "t\n", "absent")
    now[0] += rt.policy.preview_ttl_seconds + 1
    assert_refused("two-step-required", svc.write_note, HOSTED_TRUSTED, "ideas/t.md", "t\n", "absent", confirmed=True)
    rt.close()


def test_workstation_may_confirm_in_one_call(notes: NotesService, trusted) -> None:
    assert notes.write_note(trusted, "a/b.md", "x\n", "absent", confirmed=True).status == "committed"


def test_protected_paths_always_two_step(notes: NotesService, trusted) -> None:
    rev = notes.read_note(trusted, "rules/digest.md").revision
    with pytest.raises(PolicyDenied) as info:
        notes.write_note(trusted, "rules/digest.md", "new rules\n", rev, confirmed=True)
    assert info.value.rule == "two-step-required"
    notes.write_note(trusted, "rules/digest.md", "new rules\n", rev)
    assert notes.write_note(trusted, "rules/digest.md", "new rules\n", rev, confirmed=True).status == "committed"


def test_stale_write_refused_with_current_revision_and_diff(notes: NotesService, trusted) -> None:
    rev1 = create(notes, trusted, "s.md", "one\n")
    rev2 = notes.write_note(trusted, "s.md", "two\n", rev1, confirmed=True).new_revision
    with pytest.raises(StaleRevision) as info:
        notes.write_note(trusted, "s.md", "three\n", rev1, confirmed=True)
    assert info.value.current_revision == rev2
    assert "-one" in info.value.diff and "+two" in info.value.diff
    assert notes.read_note(trusted, "s.md").text == "two\n"


def test_stale_is_refused_even_in_preview(notes: NotesService, trusted) -> None:
    create(notes, trusted, "p.md", "one\n")
    with pytest.raises(StaleRevision):
        notes.write_note(trusted, "p.md", "x\n", "absent")


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("bad \ud800 surrogate", "content-not-utf8"),  # lone surrogate: not encodable as UTF-8
        ("nul \x00 byte", "content-binary"),
        ("x" * ((1 << 20) + 1), "note-too-large"),
    ],
)
def test_bad_content_refused_and_nothing_written(notes: NotesService, trusted, runtime, content, rule) -> None:
    head = runtime.environment(None).store.head()
    with pytest.raises(ContentRejected) as info:
        notes.write_note(trusted, "c.md", content, "absent", confirmed=True)
    assert info.value.rule == rule
    assert runtime.environment(None).store.head() == head


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("../x.md", "path-traversal"),
        ("/etc/x.md", "path-absolute"),
        (".obsidian/x.md", "path-hidden-segment"),
        ("a\\b.md", "path-backslash"),
        ("x.txt", "path-not-markdown"),
        ("a/%2e%2e/b.md", "path-percent-encoded"),
    ],
)
def test_bad_paths_refused(notes: NotesService, trusted, path: str, rule: str) -> None:
    assert_refused(rule, notes.write_note, trusted, path, "x", "absent", confirmed=True)
    assert_refused(rule, notes.read_note, trusted, path)


def test_case_collision_refused(notes: NotesService, trusted) -> None:
    with pytest.raises(NotegateError) as info:
        notes.write_note(trusted, "Rules/Digest.md", "x\n", "absent", confirmed=True)
    assert info.value.rule == "path-case-collision"


def test_a_folder_case_collision_names_the_folder_and_the_path_to_use(notes: NotesService, trusted) -> None:
    """The demo vault has ``projects/``: a note in ``Projects/`` names that folder (not as a note) and the
    path spelled as the vault spells it."""
    with pytest.raises(NotegateError) as info:
        notes.write_note(trusted, "Projects/Deep/new idea.md", "x\n", "absent", confirmed=True)
    assert info.value.rule == "path-case-collision"
    text = info.value.explain()
    assert "from the existing folder projects/" in text and "as projects/Deep/new idea.md" in text, text
    assert "existing note" not in text


def test_unknown_environment(notes: NotesService, trusted) -> None:
    with pytest.raises(UnknownEnvironment) as info:
        notes.list_notes(trusted, environment="nope")
    assert "personal" in info.value.explain()


def test_bad_base_revision(notes: NotesService, trusted) -> None:
    with pytest.raises(NotegateError) as info:
        notes.write_note(trusted, "q.md", "x", "", confirmed=True)
    assert info.value.rule == "base-revision-required"
    with pytest.raises(NotegateError) as info:
        notes.write_note(trusted, "q.md", "x", "HEAD~1", confirmed=True)
    assert info.value.rule == "base-revision-invalid"


def test_private_is_invisible_through_every_tool(notes: NotesService, trusted, restricted) -> None:
    create(notes, trusted, "private/diary.md", "secret zebra\n")
    listed = [n.path for n in notes.list_notes(restricted).notes]
    assert not any(p.startswith("private/") for p in listed)
    for folder in ("private", "never-made"):  # a private folder is "no such folder", in the same words
        with pytest.raises(NoSuchNote) as gone:
            notes.list_notes(restricted, folder)
        assert gone.value.rule == "no-such-folder" and gone.value.message == f"no such folder: {folder}."
        assert "private" not in (gone.value.remedy or "")
    assert notes.list_notes(restricted, recursive=False).folders.count("private") == 0
    assert notes.search_notes(restricted, "zebra").hits == []
    for call in (
        lambda: notes.read_note(restricted, "private/diary.md"),
        lambda: notes.note_history(restricted, "private/diary.md"),
    ):
        with pytest.raises(NoSuchNote) as info:
            call()
        assert info.value.message == "no such note: private/diary.md"
    # The answer for a private note is the same as for a note that does not exist.
    with pytest.raises(NoSuchNote) as missing:
        notes.read_note(restricted, "private/none.md")
    assert missing.value.rule == "no-such-note"
    # The trusted owner sees it.
    assert [h.path for h in notes.search_notes(trusted, "zebra").hits] == ["private/diary.md"]


def test_restricted_may_not_write_outside_the_inbox(notes: NotesService, restricted, trusted) -> None:
    rev = create(notes, trusted, "open.md", "x\n")
    calls = [
        lambda: notes.write_note(restricted, "open.md", "y", rev),
        lambda: notes.append_note(restricted, "open.md", "y", rev),
        lambda: notes.move_note(restricted, "open.md", "moved.md", rev),
        lambda: notes.delete_note(restricted, "open.md", rev),
        lambda: notes.write_note(restricted, "new.md", "y", "absent"),
    ]
    for call in calls:
        with pytest.raises(PolicyDenied) as info:
            call()
        assert info.value.rule == "restricted-outside-inbox"


def test_machine_has_no_mcp(notes: NotesService) -> None:
    machine = make_caller(tier="machine", client_class="machine", login="cron")
    with pytest.raises(PolicyDenied) as info:
        notes.read_note(machine, "rules/digest.md")
    assert "contracts" in info.value.explain()


def test_append_move_delete_restore_history(notes: NotesService, trusted) -> None:
    rev = create(notes, trusted, "log.md", "first\n")
    rev = notes.append_note(trusted, "log.md", "second", rev, confirmed=True).new_revision
    assert notes.read_note(trusted, "log.md").text == "first\nsecond\n"
    moved = notes.move_note(trusted, "log.md", "archive/log.md", rev, confirmed=True)
    assert moved.new_revision == rev
    with pytest.raises(NoSuchNote):
        notes.read_note(trusted, "log.md")
    history = notes.note_history(trusted, "archive/log.md").changes
    assert history[0].summary.startswith("move")
    deleted = notes.delete_note(trusted, "archive/log.md", rev, confirmed=True)
    assert deleted.status == "committed"
    old_commit = notes.note_history(trusted, "archive/log.md").changes[1].commit
    restored = notes.restore_note(trusted, "archive/log.md", old_commit, "absent", confirmed=True)
    assert notes.read_note(trusted, "archive/log.md").text == "first\nsecond\n"
    assert restored.new_revision == rev
    with pytest.raises(NotegateError) as info:
        notes.restore_note(trusted, "archive/log.md", "0" * 40, restored.new_revision, confirmed=True)
    assert info.value.rule == "unknown-commit"


# ------------------------------------------------------- append: the note's line ends
def committed(runtime: Runtime, path: str) -> bytes:
    return runtime.environment(None).store.read(path)[0]


@pytest.mark.parametrize(
    ("note", "text", "after"),
    [
        ("a\r\nb\r\n", "c\nd", "a\r\nb\r\nc\r\nd\r\n"),  # CRLF note: the text's LF go as CRLF, the last too
        ("a\r\nb\r\n", "c\r\nd\ne", "a\r\nb\r\nc\r\nd\r\ne\r\n"),
        ("a\r\nb", "c\nd", "a\r\nb\r\nc\r\nd\r\n"),  # no final break: the one put between is CRLF too
        ("a\nb\n", "c\r\nd", "a\nb\nc\nd\n"),  # LF note: stays LF
        ("a", "b\r\nc", "a\nb\r\nc\n"),  # no line break: no style, the text as written (as before)
        ("a\r\nb\nc\n", "d\ne\r\n", "a\r\nb\nc\nd\ne\r\n"),  # mixed: no one style, as written (as before)
    ],
)
def test_append_takes_the_notes_line_ends(
    notes: NotesService, trusted, runtime: Runtime, note: str, text: str, after: str
) -> None:
    rev = create(notes, trusted, "eol.md", note)
    done = notes.append_note(trusted, "eol.md", text, rev, confirmed=True)
    assert committed(runtime, "eol.md") == after.encode()
    assert notes.read_note(trusted, "eol.md").revision == done.new_revision


def test_the_size_limit_counts_the_crlf_an_append_commits(vault: Path, trusted) -> None:
    """30 bytes of CRLF note and 60 of LF text fit in 100 as sent; as committed (CRLF: 120) they do not."""
    set_policy(vault, max_note_bytes=100)
    runtime = Runtime(load_config(vault))
    try:
        notes = NotesService(runtime)
        rev = create(notes, trusted, "big.md", "a\r\n" * 10)
        head = runtime.environment(None).store.head()
        with pytest.raises(ContentRejected) as info:
            notes.append_note(trusted, "big.md", "b\n" * 30, rev, confirmed=True)
        assert info.value.rule == "note-too-large" and "would be 120 bytes" in info.value.message
        assert runtime.environment(None).store.head() == head
    finally:
        runtime.close()


def test_the_scans_and_gates_of_an_append_see_the_bytes_committed(
    notes: NotesService, trusted, runtime: Runtime, monkeypatch
) -> None:
    rev = create(notes, trusted, "gated.md", "a\r\n")
    scanned: list[str] = []
    gated: list[bytes] = []
    real_secrets, real_gate = notes.check_secrets, planner.decide_file
    monkeypatch.setattr(
        notes, "check_secrets", lambda c, text, *a, **k: scanned.append(text) or real_secrets(c, text, *a, **k)
    )
    monkeypatch.setattr(planner, "decide_file", lambda pol, path, f: gated.append(f.read()) or real_gate(pol, path, f))
    preview = notes.append_note(trusted, "gated.md", "b\nc", rev)
    assert "+b\r\n+c\r\n" in preview.diff
    notes.append_note(trusted, "gated.md", "b\nc", rev, confirmed=True)
    assert committed(runtime, "gated.md") == b"a\r\nb\r\nc\r\n"
    assert scanned == ["b\r\nc"] * 2 and gated == [b"a\r\nb\r\nc\r\n"] * 2  # the preview's, then the commit's


_style_notes = itertools.count()
note_lines = st.lists(st.sampled_from(["a", "# h", "", "会", "- x"]), min_size=2, max_size=6)
appended = st.lists(st.sampled_from(["x", "会", " ", "---", "\n", "\r\n"]), min_size=1, max_size=20).map("".join)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=note_lines, style=st.sampled_from(["\n", "\r\n"]), ends=st.booleans(), text=appended)
def test_an_append_to_a_one_style_note_keeps_that_style(
    notes: NotesService, trusted, runtime: Runtime, lines: list[str], style: str, ends: bool, text: str
) -> None:
    """Whatever LF/CRLF mix is appended to a note written in one style: the note is that text, in that style."""
    note = style.join(lines) + (style if ends else "")
    path = f"styles/{next(_style_notes)}.md"  # the vault lives on across examples: a new note each
    rev = create(notes, trusted, path, note)
    notes.append_note(trusted, path, text, rev, confirmed=True)
    expected = note + ("" if note.endswith("\n") else style) + text.replace("\r\n", "\n").replace("\n", style)
    expected += "" if expected.endswith("\n") else style
    assert committed(runtime, path) == expected.encode()
    assert line_break_of(expected) == style


def test_move_to_existing_target_refused(notes: NotesService, trusted) -> None:
    rev = create(notes, trusted, "m1.md", "1\n")
    create(notes, trusted, "m2.md", "2\n")
    with pytest.raises(NotegateError) as info:
        notes.move_note(trusted, "m1.md", "m2.md", rev, confirmed=True)
    assert info.value.rule == "target-exists"


def test_read_shows_provenance_and_commit_trailers(notes: NotesService, trusted, runtime) -> None:
    create(notes, trusted, "prov.md", "x\n")
    read = notes.read_note(trusted, "prov.md")
    change = read.last_change
    assert change is not None
    assert (change.login, change.client, change.tier, change.session) == ("owner", "laptop", "trusted", "test-session")
    message = runtime.environment(None).store.commit_info(change.commit).message
    assert "Notegate-Client: laptop" in message and "Notegate-Tier: trusted" in message
    assert "Notegate-Session: test-session" in message


def test_audit_rows_never_hold_contents(notes: NotesService, trusted, runtime) -> None:
    create(notes, trusted, "aud.md", "the-secret-body\n")
    with pytest.raises(NoSuchNote):
        notes.read_note(trusted, "nothing.md")
    rows = runtime.state.query("SELECT * FROM audit ORDER BY id")
    assert [r["tool"] for r in rows][-2:] == ["write_note", "read_note"]
    assert rows[-2]["outcome"] == "ok" and rows[-2]["commit_id"]
    assert rows[-1]["outcome"] == "no-such-note"
    dump = "\n".join(str(tuple(r)) for r in rows)
    assert "the-secret-body" not in dump


def test_listing_pages_and_folders(notes: NotesService, trusted) -> None:
    for i in range(5):
        create(notes, trusted, f"pages/n{i}.md", "x\n")
    first = notes.list_notes(trusted, "pages", limit=2)
    assert [n.path for n in first.notes] == ["pages/n0.md", "pages/n1.md"] and first.next_cursor
    second = notes.list_notes(trusted, "pages", limit=10, cursor=first.next_cursor)
    assert [n.path for n in second.notes] == ["pages/n2.md", "pages/n3.md", "pages/n4.md"]
    assert second.next_cursor is None
    top = notes.list_notes(trusted, "", recursive=False)
    assert "pages" in top.folders and all("/" not in n.path for n in top.notes)


def test_foreign_commit_searchable_after_fetch(notes: NotesService, trusted, runtime, tmp_path) -> None:
    origin = runtime.config.environment(None).origin_url
    runtime.environment(None)  # the server is up before the foreign push
    wc = tmp_path / "wc"
    subprocess.run(["git", "clone", "-q", origin, str(wc)], check=True)
    (wc / "field").mkdir()
    (wc / "field" / "note.md").write_text("# Field\nquokka sighting\n")
    subprocess.run(["git", "-C", str(wc), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(wc), "-c", "user.name=W", "-c", "user.email=w@x", "commit", "-qm", "w"], check=True
    )
    subprocess.run(["git", "-C", str(wc), "push", "-q", "origin", "HEAD:main"], check=True)
    assert notes.search_notes(trusted, "quokka").hits == []
    runtime.sync("personal")
    assert [h.path for h in notes.search_notes(trusted, "quokka").hits] == ["field/note.md"]
    change = notes.read_note(trusted, "field/note.md").last_change
    assert change.author == "pushed by W <w@x> (unverified)" and change.pushed_by == "W <w@x> (unverified)"
    assert change.login == "pushed" and change.tier is None and change.client is None


def test_search_ranks_title_over_body_and_filters_folder(notes: NotesService, trusted) -> None:
    create(notes, trusted, "a/wombat.md", "# Wombat\nAn animal.\n")
    create(notes, trusted, "b/other.md", "Mentions a wombat once in passing among many other words.\n")
    hits = notes.search_notes(trusted, "wombat").hits
    assert [h.path for h in hits] == ["a/wombat.md", "b/other.md"]
    assert [h.path for h in notes.search_notes(trusted, "wombat", folder="b").hits] == ["b/other.md"]
    # Query syntax is never trusted: FTS5 operators and quotes are plain words, punctuation alone finds nothing.
    assert notes.search_notes(trusted, '"; DROP TABLE x; -- NEAR(').hits == []
    assert notes.search_notes(trusted, '*** """ ---').hits == []


def test_search_shows_ten_by_default_and_says_when_there_are_more(
    notes: NotesService, trusted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten hits unless asked (each snippet is context a session pays for), ``more`` when others matched, and
    only the hits shown are described (each reads its note from git): the eleventh is counted, not read."""
    import notegate.vault.query as query

    for i in range(12):
        create(notes, trusted, f"fruit/apple-{i:02}.md", f"# Note {i}\n\nan apple a day, day {i}\n")
    described: list[int] = []
    real = query.front_matter_end  # make_snippet asks it once per snippet

    def counted(text: str) -> int:
        described.append(1)
        return real(text)

    monkeypatch.setattr(query, "front_matter_end", counted)
    shown = notes.search_notes(trusted, "apple")
    assert (len(shown.hits), shown.more, len(described)) == (10, True, 10)
    assert [(len(r.hits), r.more) for r in (notes.search_notes(trusted, "apple", limit=n) for n in (11, 12, 13))] == [
        (11, True),
        (12, False),
        (12, False),
    ]
    assert notes.search_notes(trusted, "nowhere-to-be-found").more is False


def test_search_ranking_reveals_nothing_about_private_notes(notes: NotesService, trusted, restricted) -> None:
    """bm25 statistics must not include private notes: a word that is also in a private note scores exactly
    like a word that is nowhere else (the review found this leaking a private code letter by letter)."""
    from notegate.services.inbox import InboxService

    create(notes, trusted, "private/vault-code.md", "the vault code is zebracrossing42\n")
    InboxService(notes).inbox_write(restricted, "capture", "zebracrossing42 giraffecrossing42", title="probe")
    scores = {
        word: notes.search_notes(restricted, word, include_inbox=True).hits[0].score
        for word in ("zebracrossing42", "giraffecrossing42")
    }
    assert scores["zebracrossing42"] == scores["giraffecrossing42"]
    assert [h.path for h in notes.search_notes(restricted, "zebra*", include_inbox=True).hits] == [
        "inbox/captures/probe.md"
    ]
    assert [h.path for h in notes.search_notes(trusted, "zebracrossing42").hits] == ["private/vault-code.md"]


def test_history_never_names_a_private_note(notes: NotesService, trusted, restricted) -> None:
    rev = create(notes, trusted, "projects/plan.md", "plan\n")
    create(notes, trusted, "projects/plan.md.bak.md", "x\n")
    notes.move_note(trusted, "projects/plan.md", "private/acquisition-of-acme.md", rev, confirmed=True)
    rev2 = create(notes, trusted, "projects/plan.md", "new plan\n")
    summaries = [c.summary for c in notes.note_history(restricted, "projects/plan.md").changes]
    assert not any("acquisition" in s for s in summaries)
    assert any("withheld" in s for s in summaries)
    assert any("acquisition" in c.summary for c in notes.note_history(trusted, "projects/plan.md").changes)
    assert rev2


def test_stale_diff_never_reads_an_unrelated_blob(notes: NotesService, trusted, restricted) -> None:
    from notegate.services.inbox import InboxService

    private_rev = create(notes, trusted, "private/pin.md", "pin 4242\n")
    InboxService(notes).inbox_write(restricted, "capture", "mine", title="mine")
    with pytest.raises(StaleRevision) as info:
        notes.append_note(restricted, "inbox/captures/mine.md", "x", private_rev, confirmed=True)
    assert "4242" not in info.value.diff and "4242" not in info.value.explain()


def test_a_word_in_most_notes_is_answered_newest_first(notes: NotesService, trusted, restricted, monkeypatch) -> None:
    """Scoring every match of a word found in most notes is costly noise (IDF ~ 0): newest first instead."""
    import notegate.vault.index as index_module

    monkeypatch.setattr(index_module, "COMMON_TERM_MIN_NOTES", 3)
    for i in range(10):  # 10 of the vault's 18 notes
        create(notes, trusted, f"common/n{i}.md", f"the word ubiquitous, note {i}" + " padding" * (i % 3) + "\n")
    hits = [h.path for h in notes.search_notes(restricted, "ubiquitous", limit=3).hits]
    assert hits == ["common/n9.md", "common/n8.md", "common/n7.md"]


def test_a_word_in_most_notes_lists_the_private_ones_by_age_too(notes: NotesService, trusted, monkeypatch) -> None:
    """A trusted caller also searches the private notes, a table too small to judge a word common by sampling:
    a word in most of the vault's notes and most private ones is listed newest first across both.  Before, it
    was ranked by bm25 among the private notes (a clamped IDF: ~2e-6 each), above the listing's fixed score,
    so every private note came first whatever its age.  A word rare among the private notes still ranks there."""
    import notegate.vault.index as index_module

    monkeypatch.setattr(index_module, "COMMON_TERM_MIN_NOTES", 3)
    create(notes, trusted, "private/old.md", "the word ubiquitous, an old private note\n")
    for i in range(10):  # 10 of the vault's 19 notes
        create(notes, trusted, f"common/n{i}.md", f"the word ubiquitous, note {i}" + " padding" * (i % 3) + "\n")
    hits = [h.path for h in notes.search_notes(trusted, "ubiquitous", limit=12).hits]
    assert hits[:3] == ["common/n9.md", "common/n8.md", "common/n7.md"] and hits[-1] == "private/old.md"


def test_visible_paths_and_note_revisions_keep_to_what_the_caller_sees(notes: NotesService) -> None:
    owner = make_caller()
    restricted = make_caller(tier="restricted", client_class="hosted", client="claude.ai")
    first = notes.write_note(owner, "private/p.md", "one\n", ABSENT, confirmed=True)
    notes.write_note(owner, "private/p.md", "one\ntwo\n", first.new_revision or "", confirmed=True)
    commit, seen = notes.visible_paths(owner)
    assert commit is not None and "private/p.md" in seen
    assert "private/p.md" not in notes.visible_paths(restricted)[1]
    revisions = notes.note_revisions(owner, "private/p.md")
    assert [r.diff.count("+two") for r in revisions] == [1, 0] and revisions[1].diff.count("+one") == 1
    with pytest.raises(NoSuchNote) as refused:
        notes.note_revisions(restricted, "private/p.md")
    assert refused.value.rule == "no-such-note"
