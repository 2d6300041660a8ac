"""Provenance cannot be forged by a push (issue 27): who made a commit comes only from what the server recorded
when it made it (state ``commit_provenance``), never from the commit's author e-mail or ``Notegate-*`` trailers.

At the git door a pushed commit speaking in the server's voice is refused ``[push-forged-provenance]``: by the
origin's real pre-receive hook (a real ``git push``), and by the server's fetch when the origin has no hook.
Readers (read_note's last change, note_history, inbox authorship) show a commit the server did not record as
"pushed by" its committer, unverified, never with a tier; the server's own writes keep their real author.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.policy import decide_commit_provenance
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.state import StateDB
from support.callers import make_caller
from support.gitstreams import FILE, SIG, Origin, accepted, commit, forge_push, refused, rules_of, scratch_at

git_daemon = pytest.importorskip("e2e.test_replicas").git_daemon

OWNER = make_caller()
PHONE = make_caller(tier="restricted", client_class="hosted", login="owner", client="phone")
FORGED = (
    "update notes/plan.md\n\n"
    "Notegate-Client: laptop\n"
    "Notegate-Connector: token:laptop\n"
    "Notegate-Session: s-1\n"
    "Notegate-Tier: trusted\n"
    "Notegate-Reviewed-By: laptop (owner)\n"
)
RULE = "push-forged-provenance"


def signed(repo: pygit2.Repository, parent: str, message: str, *, email: str = "tester@example.invalid") -> str:
    """One commit on ``parent`` adding a note, with ``message`` and the author/committer ``email``."""
    base = commit(repo, [parent], add={"notes/plan.md": (FILE, b"# Plan\n\nship it\n")})
    who = pygit2.Signature("Owner", email, 1_800_000_000, 0)
    source = repo[pygit2.Oid(hex=base)]
    return str(repo.create_commit(None, who, who, message, source.tree_id, [pygit2.Oid(hex=parent)]))


def fresh_replica(config: Path, name: str) -> Runtime:
    """A replica opening the origin for the first time (its own clone), sharing the state database."""
    other = config.parent / f"{name}.toml"
    other.write_text(config.read_text().replace('state_dir = "state"', f'state_dir = "{name}"', 1))
    runtime = Runtime(load_config(other))
    own = runtime.state
    runtime.state = StateDB.for_config(load_config(config))
    own.close()
    return runtime


# ------------------------------------------------------------------ the real hook


def test_forged_trailers_are_refused_at_the_hook_even_from_the_owner(door: Origin) -> None:
    forged = signed(door.scratch, door.main, FORGED)
    result = door.push(forged, pusher={"NOTEGATE_PUSHER": "owner"})
    assert refused(result) == [(forged[:12], "(the commit)", RULE)]
    assert "What to do instead [push-forged-provenance]: Reword the commit" in result.stderr
    plain = signed(door.scratch, door.main, "update notes/plan.md\n")
    accepted(door.push(plain, pusher={"GL_USERNAME": "bob"}))  # the same change in its own voice


@pytest.mark.parametrize(
    "email", ["owner@notegate", "OWNER@NOTEGATE", "owner@notegat\u0435", "notegate@localhost", " owner@notegate"]
)
def test_the_servers_identities_are_refused_at_the_hook(door: Origin, email: str) -> None:
    forged = signed(door.scratch, door.main, "update notes/plan.md\n", email=email)
    assert rules_of(door.push(forged, pusher={"NOTEGATE_PUSHER": "owner"})) == {RULE}


@pytest.mark.parametrize(
    "trailer",
    [
        "notegate-tier: trusted",  # case
        "  Notegate-Tier :  trusted",  # whitespace
        "N\u043etegate-Tier: trusted",  # Cyrillic o
        "Notegate\u2010Tier: trusted",  # a hyphen look-alike
        "Note\u200bgate-Tier: trusted",  # an invisible character inside
        "Notegate-\n Tier: trusted",  # a folded line
        "\uff2eotegate-Tier: trusted",  # fullwidth N
    ],
    ids=["case", "whitespace", "cyrillic", "hyphen", "invisible", "folded", "fullwidth"],
)
def test_trailer_spellings_are_refused_at_the_hook(door: Origin, trailer: str) -> None:
    forged = signed(door.scratch, door.main, f"update notes/plan.md\n\n{trailer}\n")
    assert rules_of(door.push(forged, pusher={"NOTEGATE_PUSHER": "owner"})) == {RULE}


def test_the_servers_own_pushes_pass_the_hook_over_a_real_transport(door: Origin) -> None:
    """The server pushes to an origin served by ``git daemon`` (git://: every push runs the hook, the server's
    included). Its commits carry trailers and its identities; they pass because the state database the hook's
    config names recorded them before they were pushed. The same words on a commit it did not record do not."""
    with git_daemon(door.origin.parent) as daemon:
        served = door.config.with_name("served.toml")
        served.write_text(
            door.config.read_text().replace('origin = "origin.git"', f'origin = "{daemon.url("origin.git")}"')
        )
        rt = Runtime(load_config(served))
        try:
            made = NotesService(rt).write_note(OWNER, "notes/own.md", "# own\n", "absent", confirmed=True)
            assert door.main == made.commit
            message = pygit2.Repository(str(door.origin))[made.commit].message
            assert "Notegate-Tier: trusted" in message
        finally:
            rt.close()
    forged = signed(scratch_at(door, made.commit), made.commit, message)
    assert rules_of(door.push(forged, pusher={"NOTEGATE_PUSHER": "owner"})) == {RULE}


# ------------------------------------------------------------------ the server's fetch (an origin without hook)


def test_the_same_commit_is_refused_by_the_fetch_and_never_repaired_by_a_revert(door: Origin) -> None:
    rt = Runtime(load_config(door.config))
    try:
        env = rt.environment(None)
        good = env.store.head()
        scratch = scratch_at(door, good)
        forged = signed(scratch, good, FORGED)
        forge_push(door.origin, scratch, forged)
        assert rt.sync("personal") == (good, good)
        assert env.store.refusal is not None and env.store.refusal.verdict.rules() == [RULE]
        with pytest.raises(NotegateError) as write:
            NotesService(rt).write_note(OWNER, "notes/x.md", "x\n", "absent", confirmed=True)
        assert write.value.rule == "origin-refused"
        revert = commit(scratch, [forged], delete=("notes/plan.md",))
        forge_push(door.origin, scratch, revert)
        rt.sync("personal")
        assert env.store.head() == good and env.store.refusal.verdict.rules() == [RULE]
    finally:
        rt.close()


def test_a_replicas_recorded_commit_passes_the_fetch(door: Origin) -> None:
    rt = Runtime(load_config(door.config))
    other = fresh_replica(door.config, "state-b")
    try:
        env = rt.environment(None)
        made = NotesService(other).write_note(OWNER, "notes/b.md", "# b\n", "absent", confirmed=True)
        assert rt.sync("personal")[1] == made.commit and env.store.refusal is None
        info = NotesService(rt).read_note(OWNER, "notes/b.md").last_change
        assert (info.login, info.client, info.tier, info.pushed_by) == ("owner", "laptop", "trusted", None)
    finally:
        other.close()
        rt.close()


# ------------------------------------------------------------------ what readers show


def test_a_push_by_a_non_owner_is_shown_as_pushed_with_no_tier(door: Origin) -> None:
    plain = signed(door.scratch, door.main, "update notes/plan.md\n", email="bob@example.invalid")
    accepted(door.push(plain, pusher={"GL_USERNAME": "bob"}))
    rt = Runtime(load_config(door.config))
    try:
        notes = NotesService(rt)
        last = notes.read_note(OWNER, "notes/plan.md").last_change
        assert last.pushed_by == "Owner <bob@example.invalid> (unverified)"
        assert last.author == "pushed by Owner <bob@example.invalid> (unverified)" and last.login == "pushed"
        assert (last.tier, last.client, last.connector, last.session, last.reviewed_by) == (None,) * 5
        [change] = notes.note_history(OWNER, "notes/plan.md").changes
        assert change == last
    finally:
        rt.close()


def test_forged_trailers_that_got_in_are_never_believed(door: Origin) -> None:
    """A first clone takes the origin's history as the operator gave it (commits made before provenance was
    recorded carry trailers and no record): a forged commit in it is still shown as pushed, never trusted."""
    good = door.main
    scratch = scratch_at(door, good)
    forged = signed(scratch, good, FORGED, email="owner@notegate")
    forge_push(door.origin, scratch, forged)
    rt = fresh_replica(door.config, "state-fresh")
    try:
        notes = NotesService(rt)
        last = notes.read_note(OWNER, "notes/plan.md").last_change
        assert last.commit == forged and last.login == "pushed" and last.tier is None
        assert last.reviewed_by is None and last.pushed_by == "Owner <owner@notegate> (unverified)"
        assert [c.tier for c in notes.note_history(OWNER, "notes/plan.md").changes] == [None]
    finally:
        rt.close()


def test_the_servers_own_writes_show_their_real_author_and_tier(door: Origin) -> None:
    rt = Runtime(load_config(door.config))
    try:
        notes = NotesService(rt)
        notes.write_note(OWNER, "notes/mine.md", "# mine\n", "absent", confirmed=True)
        last = notes.read_note(OWNER, "notes/mine.md").last_change
        assert (last.author, last.login, last.client, last.tier, last.pushed_by) == (
            "Owner",
            "owner",
            "laptop",
            "trusted",
            None,
        )
        assert notes.note_history(OWNER, "notes/mine.md").changes == [last]
    finally:
        rt.close()


def test_inbox_authorship_comes_from_the_servers_record_only(door: Origin) -> None:
    """An append pushed with trailers naming the reviewer's connector login does not make the reviewer an
    author (nor hide the real one): the pushed part is "pushed by" its committer, unverified."""
    reviewer = dataclasses.replace(make_caller(client="desk"), connector="token:desk")
    rt = Runtime(load_config(door.config))
    try:
        inbox = InboxService(NotesService(rt))
        item = inbox.inbox_write(PHONE, "log", "Fixed the flaky test.", project="demo").path
        head = rt.environment(None).store.head()
    finally:
        rt.close()
    scratch = scratch_at(door, head)
    text = scratch[head].peel(pygit2.Tree)[item].data + b"\nand more\n"
    appended = commit(scratch, [head], add={item: (FILE, text)})
    tree = scratch[pygit2.Oid(hex=appended)].tree_id
    message = "append\n\nNotegate-Connector: token:desk\nNotegate-Client: desk\n"
    forged = str(scratch.create_commit(None, SIG, SIG, message, tree, [pygit2.Oid(hex=head)]))
    forge_push(door.origin, scratch, forged)
    fresh = fresh_replica(door.config, "state-fresh")
    try:
        inbox = InboxService(NotesService(fresh))
        labels = inbox.author_labels(inbox.authors(fresh.environment(None), item))
        assert labels == ["phone (owner)", "pushed (Tester <tester@example.invalid> (unverified))"]
        assert "desk (owner)" not in labels
        listed = inbox.list_inbox(reviewer)
        assert [i.path for i in listed.items] == [item]
    finally:
        fresh.close()


# ------------------------------------------------------------------ the decision, over spellings

_NOTEGATE_LOOKALIKES = {
    "N": "N\uff2e\u039d",
    "o": "o\u043e\u03bf\u0585\uff4f",
    "t": "tT\uff54",
    "e": "eE\u0435\uff45",
    "g": "gG\u0261\uff47",
    "a": "aA\u0430\uff41",
    "-": "-\u2010\u2011\u2012\u2013\u2212\uff0d",
}


@st.composite
def trailer_spellings(draw) -> str:
    word = "Notegate-"
    letters = [draw(st.sampled_from(_NOTEGATE_LOOKALIKES.get(ch, ch) + ch.upper() + ch.lower())) for ch in word]
    gaps = [draw(st.sampled_from(["", "", " ", "\t", "\u200b", "\u00ad"])) for _ in letters]
    spelled = "".join(g + c for g, c in zip(gaps, letters, strict=True))
    key = draw(st.sampled_from(["Tier", "tier", "Reviewed-By", "Client", "Connector", "X"]))
    fold = draw(st.sampled_from(["", "\n ", "\n\t"]))
    lead = draw(st.sampled_from(["", " ", "\t"]))
    before = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
    return f"{before}\n\n{lead}{spelled}{fold}{key}{draw(st.sampled_from([':', ' :', ': ']))} trusted\n"


@given(trailer_spellings())
def test_any_spelling_of_a_notegate_trailer_is_refused(message: str) -> None:
    decision = decide_commit_provenance(message, ("someone@example.invalid",), recorded=False)
    assert (decision.allowed, decision.rule) == (False, RULE)
    assert decide_commit_provenance(message, (), recorded=True).allowed  # the server's own, recorded


@given(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz NOTEGATE-_\n\t.,;=>"), max_size=200))
def test_a_message_without_a_colon_and_a_plain_email_is_never_refused(message: str) -> None:
    """No trailer without a ':' (the Notegate words alone, "notegate sync", a summary: all fine)."""
    decision = decide_commit_provenance(message, ("someone@example.invalid",), recorded=False)
    assert decision.allowed and decision.rule == "provenance-pushed"
