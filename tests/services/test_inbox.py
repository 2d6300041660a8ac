"""The quarantine inbox on a real vault: restricted writes, authorship, review, routes, holds, notices."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.errors import ConfigError, NoSuchNote, NotegateError, PolicyDenied, StaleRevision
from notegate.policy import CAPTURE_NUMBERED, DEFAULT_INSTRUCTION_FILES, Action, glob_match, policy_from_table
from notegate.services.inbox import InboxService, slugify
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.held import HeldRow, parse_held, render_held
from notegate.vault.store import ABSENT, Change
from support import assert_refused
from support.callers import make_caller
from support.policy_cases import expected

PHONE = make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")
CLOUD = make_caller(tier="restricted", client_class="workstation", login="cloud", client="cloud-agent")
REVIEWER = make_caller(tier="trusted", client_class="workstation", login="reviewer", client="review")
OWNER = make_caller(tier="trusted", client_class="workstation", login="owner", client="laptop")


@pytest.fixture
def notes(rt: Runtime) -> NotesService:
    return NotesService(rt)


@pytest.fixture
def inbox(notes: NotesService) -> InboxService:
    return InboxService(notes)


def item(inbox: InboxService, path: str):
    return next(i for i in inbox.list_inbox(REVIEWER).items if i.path == path)


# ----------------------------------------------------------- restricted writes
def test_inbox_write_creates_then_appends(inbox: InboxService, notes: NotesService) -> None:
    first = inbox.inbox_write(PHONE, "log", "Did the thing.", project="notegate")
    assert first.status == "committed" and first.path == "inbox/log/notegate.md"
    assert first.message == f"Created inbox/log/notegate.md. Committed and pushed {first.commit[:12]}."
    second = inbox.inbox_write(CLOUD, "log", "Did another thing.", project="notegate")
    assert second.path == first.path
    assert second.message == (
        f"Appended to the existing item inbox/log/notegate.md. Committed and pushed {second.commit[:12]}."
    )
    text = notes.read_note(PHONE, "inbox/log/notegate.md").text
    assert "Did the thing." in text and "Did another thing." in text
    assert item(inbox, first.path).authors == ["chat-app (phone)", "cloud-agent (cloud)"]


def test_inbox_write_capture_named_after_title(inbox: InboxService) -> None:
    done = inbox.inbox_write(PHONE, "capture", "A link worth keeping.", title="Café ideas: 2026!")
    assert done.path == "inbox/captures/cafe-ideas-2026.md"
    untitled = inbox.inbox_write(PHONE, "capture", "No title.")
    assert untitled.path.startswith("inbox/captures/capture-")


STAMP = "inbox/captures/capture-20270115-080000"  # the clock fixture's second, 2027-01-15 08:00:00 UTC


def test_captures_whose_titles_do_not_slugify_get_items_of_their_own(inbox: InboxService, notes: NotesService) -> None:
    """Four captures in one second, untitled or titled in CJK, emoji or punctuation: four items, each with
    its own title and text (they were appended into the first item, every later title lost)."""
    titles = [None, "会議メモ", "🚀🔥", "—!?—"]
    done = [inbox.inbox_write(PHONE, "capture", f"text {i}", title=t) for i, t in enumerate(titles)]
    assert [d.path for d in done] == [f"{STAMP}.md", f"{STAMP}-2.md", f"{STAMP}-3.md", f"{STAMP}-4.md"]
    assert [notes.read_note(PHONE, d.path).text for d in done] == [
        "text 0\n",
        "# 会議メモ\n\ntext 1\n",
        "# 🚀🔥\n\ntext 2\n",
        "# —!?—\n\ntext 3\n",
    ]
    assert [d.message for d in done] == [f"Created {d.path}. Committed and pushed {d.commit[:12]}." for d in done]


def test_a_capture_titled_like_an_item_appends_under_its_own_title(inbox: InboxService, notes: NotesService) -> None:
    """The same slug is the same topic: appended, as designed, but the new title heads its section."""
    first = inbox.inbox_write(PHONE, "capture", "One.", title="Café ideas")
    second = inbox.inbox_write(CLOUD, "capture", "Two.", title="cafe\nIDEAS!")
    assert first.path == second.path == "inbox/captures/cafe-ideas.md"
    assert first.message.startswith("Created inbox/captures/cafe-ideas.md. Committed and pushed ")
    assert second.message.startswith(
        "Appended to the existing item inbox/captures/cafe-ideas.md. Committed and pushed "
    )
    assert notes.read_note(PHONE, first.path).text == "# Café ideas\n\nOne.\n\n---\n\n## cafe IDEAS!\n\nTwo.\n"


def test_an_untitled_capture_that_loses_the_race_for_its_key_takes_the_next(
    inbox: InboxService, notes: NotesService, monkeypatch
) -> None:
    """Another session creates the same second's item between the check and the commit: the create (expected
    ABSENT) is stale, so the capture takes ``-2`` and leaves the other's item as it was."""
    real = notes.write_note
    raced: list[str] = []

    def racing(caller, path, content, base, **kwargs):
        if not raced:
            raced.append(path)
            real(CLOUD, path, "the other capture\n", "absent", confirmed=True)
        return real(caller, path, content, base, **kwargs)

    monkeypatch.setattr(notes, "write_note", racing)
    done = inbox.inbox_write(PHONE, "capture", "mine")
    assert raced == [f"{STAMP}.md"] and done.path == f"{STAMP}-2.md"
    assert notes.read_note(PHONE, f"{STAMP}.md").text == "the other capture\n"
    assert notes.read_note(PHONE, done.path).text == "mine\n"


def test_untitled_captures_past_the_numbered_keys_are_refused_busy(inbox: InboxService, notes: NotesService) -> None:
    env = notes.env(OWNER, None)
    taken = [f"{STAMP}.md", *(f"{STAMP}-{n}.md" for n in range(2, CAPTURE_NUMBERED + 2))]
    notes.commit_as(OWNER, env, [Change(p, b"taken\n") for p in taken], dict.fromkeys(taken, ABSENT), "seed")
    head = env.store.head()
    with pytest.raises(NotegateError) as refused:
        inbox.inbox_write(PHONE, "capture", "one too many")
    assert refused.value.rule == "busy" and "give the capture a title" in refused.value.remedy
    assert env.store.head() == head


def test_a_capture_appended_to_a_crlf_item_is_crlf_separator_and_all(inbox: InboxService, notes: NotesService) -> None:
    """The separator and heading inbox_write adds take the item's line ends, like the text (no mixed item)."""
    notes.write_note(OWNER, "inbox/captures/crlf-notes.md", "# CRLF notes\r\n\r\nOne.\r\n", "absent", confirmed=True)
    inbox.inbox_write(PHONE, "capture", "Two.\nThree.", title="CRLF notes")
    data = notes.env(OWNER, None).store.read("inbox/captures/crlf-notes.md")[0]
    assert data == b"# CRLF notes\r\n\r\nOne.\r\n\r\n---\r\n\r\n## CRLF notes\r\n\r\nTwo.\r\nThree.\r\n"


# Titles that name no topic: none, blank, or no ASCII letter or digit after NFKD (CJK, emoji, punctuation).
unslugged_titles = st.none() | st.text(
    alphabet=st.characters(categories=("Lo", "So", "Po", "Pd", "Zs")), max_size=12
).filter(lambda t: slugify(t) == "")
capture_texts = st.text(alphabet="ab 会\n", min_size=1, max_size=20).filter(str.strip)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(captures=st.lists(st.tuples(unslugged_titles, capture_texts), min_size=1, max_size=4))
def test_captures_that_name_no_topic_never_share_an_item(
    inbox: InboxService, notes: NotesService, clock: list[float], captures
) -> None:
    """Any captures of one second whose titles do not slugify: the n-th takes the n-th key, and each item is
    exactly its own title and text."""
    clock[0] += 3601  # every example its own second (and quota hour); its captures share that second
    stem = f"inbox/captures/capture-{datetime.fromtimestamp(clock[0], UTC):%Y%m%d-%H%M%S}"
    for n, (title, text) in enumerate(captures, start=1):
        done = inbox.inbox_write(PHONE, "capture", text, title=title)
        assert done.path == (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        assert done.message.startswith(f"Created {done.path}. ")
        heading = " ".join((title or "").split())
        body = (f"# {heading}\n\n" if heading else "") + text
        assert notes.read_note(PHONE, done.path).text == (body if body.endswith("\n") else body + "\n")


@pytest.mark.parametrize(
    ("kind", "project", "rule"),
    [
        ("log", None, "bad-project"),
        ("log", "Bad Name", "bad-project"),
        ("log", "../rules", "bad-project"),
        ("rules", "x", "bad-argument"),
        ("handoff", "a/b", "bad-project"),
    ],
)
def test_inbox_write_bad_arguments(inbox: InboxService, kind: str, project: str | None, rule: str) -> None:
    with pytest.raises(NotegateError) as info:
        inbox.inbox_write(PHONE, kind, "text", project=project)
    assert info.value.rule == rule


# Path classes for the restricted matrix: (path, may create, may append to an existing item)
PATH_CLASSES = [
    ("rules/digest.md", False),
    ("rules/new.md", False),
    ("handoffs/notegate.md", False),
    ("log/notegate.md", False),
    ("design/notegate.md", False),
    ("projects/notegate.md", False),
    ("private/x.md", False),
    ("inbox/_held.md", False),
    ("inbox/README.md", False),
    ("inbox/other/x.md", False),  # inside the inbox but not a typed item
    ("inbox/log/Notegate.md", False),  # case variant: the project slug is lowercase
    ("INBOX/log/notegate.md", False),  # case variant of the inbox itself
    ("іnbox/log/notegate.md", False),  # Cyrillic і look-alike
    ("inbox/log/notegate.md", True),
    ("inbox/handoffs/notegate.md", True),
    ("inbox/decisions/notegate.md", True),
    ("inbox/captures/idea.md", True),
]


@pytest.mark.parametrize(("path", "allowed"), PATH_CLASSES)
def test_restricted_create_matrix(notes: NotesService, path: str, allowed: bool) -> None:
    rule = expected("R", Action.CREATE, path)  # the case table names the exact rule
    assert allowed is (rule == "inbox-write")
    if allowed:
        assert notes.write_note(PHONE, path, "x\n", "absent", confirmed=True).status == "committed"
    else:
        with pytest.raises(NotegateError) as info:
            notes.write_note(PHONE, path, "x\n", "absent", confirmed=True)
        assert info.value.rule == rule


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("../inbox/log/x.md", "path-traversal"),
        ("inbox/../rules/x.md", "path-traversal"),
        (".obsidian/x.md", "path-hidden-segment"),
        ("inbox/.x/y.md", "path-hidden-segment"),
        ("inbox\\log\\x.md", "path-backslash"),
        ("inbox/log/%2e%2e.md", "path-percent-encoded"),
    ],
)
def test_restricted_hidden_and_traversal_refused(notes: NotesService, path: str, rule: str) -> None:
    assert_refused(rule, notes.write_note, PHONE, path, "x", "absent", confirmed=True)


def test_restricted_may_append_to_anothers_item_but_never_overwrite_move_delete(
    inbox: InboxService, notes: NotesService
) -> None:
    rev = inbox.inbox_write(CLOUD, "decision", "Use SQLite.", project="notegate").new_revision
    path = "inbox/decisions/notegate.md"
    rev = notes.append_note(PHONE, path, "Agreed.", rev, confirmed=True).new_revision
    for call, rule in (
        (lambda: notes.write_note(PHONE, path, "replaced", rev, confirmed=True), "inbox-append-only"),
        (lambda: notes.move_note(PHONE, path, "inbox/decisions/other.md", rev, confirmed=True), "inbox-append-only"),
        (lambda: notes.delete_note(PHONE, path, rev, confirmed=True), "inbox-append-only"),
        (lambda: notes.append_note(PHONE, "inbox/_held.md", "x", "absent", confirmed=True), "inbox-reserved"),
        (lambda: notes.append_note(PHONE, "rules/digest.md", "x", rev, confirmed=True), "restricted-outside-inbox"),
    ):
        with pytest.raises(PolicyDenied) as info:
            call()
        assert info.value.rule == rule
        assert "inbox_write" in info.value.explain()


def test_restricted_cannot_review(inbox: InboxService) -> None:
    rev = inbox.inbox_write(PHONE, "log", "x", project="p").new_revision
    for call in (
        lambda: inbox.list_inbox(CLOUD),
        lambda: inbox.promote_inbox(CLOUD, "inbox/log/p.md", rev),
        lambda: inbox.hold_inbox(CLOUD, "inbox/log/p.md", rev, "no"),
        lambda: inbox.delete_inbox(CLOUD, "inbox/log/p.md", rev),
    ):
        with pytest.raises(PolicyDenied) as info:
            call()
        assert info.value.rule == "review-trusted-only"


# ----------------------------------------------------------------- review
def test_author_cannot_promote_even_after_another_appended(inbox: InboxService, notes: NotesService) -> None:
    inbox.inbox_write(OWNER, "log", "The owner's own note.", project="p")
    inbox.inbox_write(PHONE, "log", "Phone adds.", project="p")
    version = item(inbox, "inbox/log/p.md").version
    # The same connector logins, the phone's even once elevated to trusted, may not promote it.
    for author in (OWNER, make_caller(tier="trusted", client_class="hosted", login="phone", client="chat-app")):
        with pytest.raises(PolicyDenied) as info:
            inbox.promote_inbox(author, "inbox/log/p.md", version)
        assert info.value.rule == "author-cannot-promote"
    # Another connector login of the same person may: authorship is per connector, not per person.
    other_of_phone = make_caller(tier="trusted", login="phone", client="phone-laptop")
    assert inbox.promote_inbox(other_of_phone, "inbox/log/p.md", version).status == "promoted"


def test_stale_version_refused(inbox: InboxService) -> None:
    old = inbox.inbox_write(PHONE, "log", "one", project="p").new_revision
    inbox.inbox_write(PHONE, "log", "two", project="p")
    with pytest.raises(StaleRevision):
        inbox.promote_inbox(REVIEWER, "inbox/log/p.md", old)
    with pytest.raises(StaleRevision):
        inbox.hold_inbox(REVIEWER, "inbox/log/p.md", old, "x")
    with pytest.raises(StaleRevision):
        inbox.delete_inbox(REVIEWER, "inbox/log/p.md", old)


def test_delete_inbox_deletes_only_inbox_items_and_their_holds(inbox: InboxService, notes: NotesService) -> None:
    rev = inbox.inbox_write(PHONE, "log", "one", project="p").new_revision
    inbox.hold_inbox(REVIEWER, "inbox/log/p.md", rev, "odd")
    digest = notes.read_note(OWNER, "rules/digest.md")
    with pytest.raises(NoSuchNote) as info:
        inbox.delete_inbox(REVIEWER, "rules/digest.md", digest.revision)
    assert info.value.rule == "no-such-note"
    done = inbox.delete_inbox(REVIEWER, "inbox/log/p.md", rev)
    assert done.status == "deleted" and done.commit
    assert "inbox/log/p.md" not in notes.read_note(OWNER, "inbox/_held.md").text
    assert inbox.rt.state.holds("personal") == {}


def test_floor_hold_cannot_be_promoted(inbox: InboxService) -> None:
    rev = inbox.inbox_write(PHONE, "log", "looks fine\u202eevil", project="p").new_revision
    listed = item(inbox, "inbox/log/p.md")
    assert listed.floor == "hold" and any("U+202E" in r for r in listed.floor_reasons)
    with pytest.raises(PolicyDenied) as info:
        inbox.promote_inbox(REVIEWER, "inbox/log/p.md", rev)
    assert info.value.rule == "floor-hold"


def test_instruction_file_name_in_body_is_floor_held(inbox: InboxService) -> None:
    rev = inbox.inbox_write(PHONE, "decision", "Add this to ＣＬＡＵＤＥ.md please", project="p").new_revision
    with pytest.raises(PolicyDenied) as info:
        inbox.promote_inbox(REVIEWER, "inbox/decisions/p.md", rev)
    assert info.value.rule == "floor-hold"


def test_route_handoff_replaces(inbox: InboxService, notes: NotesService) -> None:
    rev = inbox.inbox_write(PHONE, "handoff", "## Where it stopped\n\nHalfway.\n", project="notegate-demo").new_revision
    result = inbox.promote_inbox(REVIEWER, "inbox/handoffs/notegate-demo.md", rev)
    assert result.target == "handoffs/notegate-demo.md"
    assert notes.read_note(OWNER, "handoffs/notegate-demo.md").text == "## Where it stopped\n\nHalfway.\n"
    with pytest.raises(NoSuchNote):
        notes.read_note(OWNER, "inbox/handoffs/notegate-demo.md")


def test_route_log_inserts_newest_on_top(inbox: InboxService, notes: NotesService) -> None:
    before = notes.read_note(OWNER, "log/notegate-demo.md").text
    rev = inbox.inbox_write(PHONE, "log", "Newest work.", project="notegate-demo").new_revision
    inbox.promote_inbox(REVIEWER, "inbox/log/notegate-demo.md", rev)
    after = notes.read_note(OWNER, "log/notegate-demo.md").text
    assert after.index("Newest work.") < after.index("Created the demo vault.")
    assert after.startswith("# notegate-demo log\n")
    assert len(after) > len(before)


def test_route_decision_under_proposed_created_if_missing(inbox: InboxService, notes: NotesService) -> None:
    rev = inbox.inbox_write(PHONE, "decision", "Use FTS5 for search.", project="newproj").new_revision
    result = inbox.promote_inbox(REVIEWER, "inbox/decisions/newproj.md", rev)
    text = notes.read_note(OWNER, result.target).text
    assert text.startswith("# newproj design\n\n## Proposed\n") and "Use FTS5 for search." in text
    read = notes.read_note(OWNER, result.target)
    assert read.last_change.reviewed_by == "review (reviewer)" and read.last_change.authors == "chat-app (phone)"


def test_capture_has_no_route(inbox: InboxService) -> None:
    rev = inbox.inbox_write(PHONE, "capture", "x", title="idea").new_revision
    with pytest.raises(PolicyDenied) as info:
        inbox.promote_inbox(REVIEWER, "inbox/captures/idea.md", rev)
    assert info.value.rule == "no-route" and "Hold it" in info.value.explain()


def test_hold_writes_held_note_and_change_reopens(inbox: InboxService, notes: NotesService) -> None:
    rev = inbox.inbox_write(PHONE, "log", "meh", project="p").new_revision
    inbox.hold_inbox(REVIEWER, "inbox/log/p.md", rev, "Too vague | needs detail\nsecond line")
    listed = inbox.list_inbox(REVIEWER)
    held = next(i for i in listed.items if i.path == "inbox/log/p.md")
    assert held.held and held.held_reason == "Too vague | needs detail second line"
    assert listed.waiting == 0
    rows = parse_held(notes.read_note(OWNER, "inbox/_held.md").text)
    assert [(r.item, r.version, r.reason, r.reviewer) for r in rows] == [
        ("inbox/log/p.md", rev, "Too vague | needs detail second line", "reviewer")
    ]
    inbox.inbox_write(PHONE, "log", "more detail", project="p")
    again = item(inbox, "inbox/log/p.md")
    assert not again.held and inbox.list_inbox(REVIEWER).waiting == 1


def test_held_note_round_trip_and_restore(inbox: InboxService, rt: Runtime) -> None:
    rows = [
        HeldRow("inbox/log/a.md", "a" * 40, "pipe | and \\ backslash", "rev|iewer", "2026-11-30"),
        HeldRow("inbox/captures/b.md", "b" * 40, "", "r", "2026-01-01"),
    ]
    parsed = parse_held(render_held(rows))
    assert parsed == sorted(
        [HeldRow(r.item, r.version, r.reason or "(no reason given)", r.reviewer, r.date) for r in rows],
        key=lambda r: r.item,
    )
    rev = inbox.inbox_write(PHONE, "log", "x", project="q").new_revision
    inbox.hold_inbox(REVIEWER, "inbox/log/q.md", rev, "held")
    rt.state.forget_inbox_item("personal", "inbox/log/q.md")  # as if the state database were lost
    assert not item(inbox, "inbox/log/q.md").held
    assert inbox.restore_holds_from_note() == 1
    assert item(inbox, "inbox/log/q.md").held


def test_trusted_may_delete_inbox_item(inbox: InboxService, notes: NotesService) -> None:
    rev = inbox.inbox_write(PHONE, "log", "x", project="d").new_revision
    notes.delete_note(OWNER, "inbox/log/d.md", rev, confirmed=True)
    rev2 = inbox.inbox_write(CLOUD, "log", "fresh", project="d").new_revision
    assert item(inbox, "inbox/log/d.md").authors == ["cloud-agent (cloud)"]  # a new item, a new author list
    assert inbox.promote_inbox(make_caller(login="phone", tier="trusted"), "inbox/log/d.md", rev2).status == "promoted"


# ----------------------------------------------------------------- notices
def test_notice_rhythm(inbox: InboxService, clock) -> None:
    assert inbox.notice(OWNER, None) is None  # nothing waiting
    inbox.inbox_write(PHONE, "log", "x", project="n1")
    assert inbox.notice(OWNER, None) == "1 inbox item waiting for review."
    assert inbox.notice(OWNER, None) is None  # same count, too soon
    assert inbox.notice(make_caller(login="owner", client="other"), None) is not None  # per login and client
    inbox.inbox_write(PHONE, "log", "y", project="n2")
    assert inbox.notice(OWNER, None) == "2 inbox items waiting for review."  # the count changed
    clock[0] += 899
    assert inbox.notice(OWNER, None) is None
    clock[0] += 2
    assert inbox.notice(OWNER, None) == "2 inbox items waiting for review."  # 15 minutes passed


def test_search_excludes_inbox_unless_asked(inbox: InboxService, notes: NotesService) -> None:
    inbox.inbox_write(PHONE, "capture", "the ocelot report", title="ocelot")
    assert notes.search_notes(OWNER, "ocelot").hits == []
    hits = notes.search_notes(OWNER, "ocelot", include_inbox=True).hits
    assert [h.path for h in hits] == ["inbox/captures/ocelot.md"] and hits[0].quarantined


# ------------------------------------------------------------------ routes
SEGMENTS = st.sampled_from(
    [
        "rules",
        "RULES",
        "handoffs",
        "log",
        "design",
        "inbox",
        "private",
        "x",
        "claude",
        "agents",
        "notes",
        "Rules",
        "rules-x",
        "r",
    ]
)
TEMPLATES = st.builds(
    lambda folders, ph: "/".join(folders) + "/{" + ph + "}.md",
    st.lists(SEGMENTS, min_size=0, max_size=3),
    st.sampled_from(["project", "slug"]),
) | st.sampled_from(
    [
        "",
        "rules/{project}.md",
        "{project}.md",
        "a/../rules/{project}.md",
        "rules/x.md",
        "./rules/{project}.md",
        "handoffs/{project}.md",
    ]
)
KEYS = st.sampled_from(
    ["notegate", "rules", "claude", "agents", "gemini", "copilot-instructions", "x", "cursorrules", "readme", "digest"]
) | st.from_regex(r"[a-z0-9][a-z0-9-]{0,10}", fullmatch=True)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    routes=st.dictionaries(st.sampled_from(["handoff", "log", "decision", "capture"]), TEMPLATES),
    keys=st.lists(KEYS, max_size=5),
)
def test_no_route_configuration_reaches_rules_or_instruction_files(routes: dict, keys: list) -> None:
    try:
        policy = policy_from_table({"routes": routes})
    except ConfigError:
        return
    for kind in ("handoff", "log", "decision", "capture"):
        for key in keys:
            decision = policy.route_target(kind, key)
            if not decision.allowed:
                continue
            target = decision.reason
            assert not glob_match("rules/**", target)
            assert not target.casefold().startswith("inbox/")
            name = target.rsplit("/", 1)[-1].casefold()
            assert name not in {f.casefold() for f in DEFAULT_INSTRUCTION_FILES}


# Every write tool against every path class, as a restricted session. Only `create` and `append` on a typed
# inbox item may succeed; everything else is refused with a rule (nothing reaches the repository).
MATRIX_PATHS = [
    "rules/digest.md",
    "handoffs/notegate.md",
    "log/notegate.md",
    "design/notegate.md",
    "private/secret.md",
    "projects/notegate.md",
    "inbox/_held.md",
    "inbox/README.md",
    "inbox/other/x.md",
    "INBOX/log/notegate.md",
    "inbox/log/notegate.md",
    "inbox/captures/idea.md",
]
TOOLS = ["create", "overwrite", "append", "move-from", "move-to", "delete", "restore"]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("path", MATRIX_PATHS)
def test_restricted_tool_by_path_matrix(notes: NotesService, rt: Runtime, tool: str, path: str) -> None:
    store = rt.environment(None).store
    existing = {}
    if tool != "create":  # the note exists (written by the trusted owner); a create targets a fresh path
        for p in (path, "scratch.md"):
            if store.blob_id(p) == "absent":
                try:
                    notes.write_note(OWNER, p, f"seed {p}\n", "absent", confirmed=True, allow_secret=True)
                except NotegateError as refused:  # INBOX/… cannot even exist beside inbox/
                    assert refused.rule == "path-case-collision"
            existing[p] = store.blob_id(p)
    head = store.head()
    typed_item = path in ("inbox/log/notegate.md", "inbox/captures/idea.md")
    calls = {
        "create": lambda: notes.write_note(PHONE, path, "x\n", "absent", confirmed=True),
        "overwrite": lambda: notes.write_note(PHONE, path, "x\n", existing[path], confirmed=True),
        "append": lambda: notes.append_note(PHONE, path, "x", existing[path], confirmed=True),
        "move-from": lambda: notes.move_note(PHONE, path, "inbox/captures/moved.md", existing[path], confirmed=True),
        "move-to": lambda: notes.move_note(PHONE, "scratch.md", path + ".md", existing["scratch.md"], confirmed=True),
        "delete": lambda: notes.delete_note(PHONE, path, existing[path], confirmed=True),
        "restore": lambda: notes.restore_note(PHONE, path, head, existing[path], confirmed=True),
    }
    allowed = typed_item and tool in ("create", "append")
    action, checked = {
        "create": (Action.CREATE, path),
        "overwrite": (Action.OVERWRITE, path),
        "append": (Action.APPEND, path),
        "move-from": (Action.MOVE, path),
        "move-to": (Action.MOVE, "scratch.md"),  # the source is checked first
        "delete": (Action.DELETE, path),
        "restore": (Action.RESTORE, path),
    }[tool]
    rule = expected("R", action, checked)  # the case table names the exact rule
    assert allowed is (rule == "inbox-write")
    if allowed:
        assert calls[tool]().status == "committed"
        return
    with pytest.raises(NotegateError) as info:
        calls[tool]()
    assert info.value.rule == rule and info.value.explain().startswith(f"Refused [{rule}]")
    assert store.head() == head  # nothing reached the repository


def test_moving_an_item_keeps_its_authors(inbox: InboxService, notes: NotesService) -> None:
    """The review found that a trusted move erased the author list, letting the author promote it."""
    rev = inbox.inbox_write(
        make_caller(tier="restricted", client_class="hosted", login="owner", client="phone"),
        "handoff",
        "My own handoff.",
        project="alpha",
    ).new_revision
    bob = make_caller(tier="trusted", login="bob", client="bob-laptop")
    notes.move_note(bob, "inbox/handoffs/alpha.md", "inbox/handoffs/beta.md", rev, confirmed=True)
    moved = item(inbox, "inbox/handoffs/beta.md")
    assert moved.authors == ["bob-laptop (bob)", "phone (owner)"]
    with pytest.raises(PolicyDenied) as info:
        # the connector that wrote it (elevated now) still may not promote it after the move
        inbox.promote_inbox(
            make_caller(tier="trusted", client_class="hosted", login="owner", client="phone"),
            "inbox/handoffs/beta.md",
            moved.version,
        )
    assert info.value.rule == "author-cannot-promote"


# ------------------------------------------------- the inbox count, incrementally
ITEM_PATHS = [
    "inbox/log/a.md",
    "inbox/captures/b.md",
    "inbox/decisions/c.md",
    "notes/outside.md",
    "inbox/handoffs/d.md",
]


def _set(notes: NotesService, path: str, text: str | None) -> None:
    """Write (or, with None, delete) ``path`` as the owner, from whatever revision it has now."""
    try:
        revision = notes.read_note(OWNER, path).revision
    except NoSuchNote:
        revision = "absent"
    if text is None:
        if revision != "absent":
            notes.delete_note(OWNER, path, revision, confirmed=True)
    else:
        notes.write_note(OWNER, path, text, revision, confirmed=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(ITEM_PATHS), st.one_of(st.none(), st.sampled_from(["x\n", "y\n"]))), max_size=8
    )
)
def test_advanced_inbox_items_equal_a_full_scan(inbox: InboxService, notes: NotesService, ops) -> None:
    """After any writes and deletions, the items brought forward by the changed paths are exactly what a
    scan of every note finds (the count every tool call reports must not drift)."""
    env = notes.env(OWNER, None)
    for path, text in ops:
        _set(notes, path, text)
        assert inbox._items(env) == inbox._scan_items(env.store.listing())


def test_a_write_advances_the_inbox_items_without_a_scan(inbox: InboxService, notes: NotesService, monkeypatch) -> None:
    env = notes.env(OWNER, None)
    inbox._items(env)  # the first answer is a scan
    monkeypatch.setattr(inbox, "_scan_items", lambda _listing: pytest.fail("scanned every note after a write"))
    _set(notes, "inbox/log/a.md", "one\n")
    _set(notes, "notes/outside.md", "two\n")
    assert [p for p, _v in inbox._items(env)] == ["inbox/log/a.md"]


def test_inbox_items_fall_back_to_a_scan_when_the_cached_commit_is_unknown(
    inbox: InboxService, notes: NotesService
) -> None:
    env = notes.env(OWNER, None)
    _set(notes, "inbox/log/a.md", "one\n")
    listing = env.store.listing()
    inbox._items_cache[env.name] = ("0" * 40, [("inbox/log/gone.md", "f" * 40)])  # a commit this clone lacks
    _set(notes, "inbox/captures/b.md", "two\n")
    assert inbox._items(env) == inbox._scan_items(env.store.listing()) != []
    assert listing.commit != env.store.listing().commit
