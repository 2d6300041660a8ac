"""The commit planner (notegate.policy.plan), on its own: counts, refusals and the bookkeeping it lists."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from notegate.policy import count_deletions, policy_from_table
from notegate.policy.plan import Base, Hold, Intent, Plan, Proposed, Refusal, blob_id, plan
from support.callers import make_caller

POLICY = policy_from_table({})
TRUSTED = make_caller()
blobs = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8)


@given(deleted=blobs, added=blobs)
def test_each_added_blob_pairs_with_one_deleted_blob(deleted: list[str], added: list[str]) -> None:
    expected = sum((Counter(deleted) - Counter(added)).values())
    assert count_deletions(deleted, added, emptied=0, limit=10**6) == expected
    # the similarity count is asked only past the limit, and only lowers the count
    assert count_deletions(deleted, added, emptied=0, limit=-1, similar=lambda: 0) == 0
    assert count_deletions(deleted, added, emptied=0, limit=10**6, similar=lambda: 1 / 0) == expected


texts = st.sampled_from([b"# a\n", b"# b\n", b"", b"  \n", b"\xef\xbb\xbf\n"])


@given(st.dictionaries(st.sampled_from([f"notes/n{i}.md" for i in range(30)]), texts | st.none(), max_size=30))
def test_renames_deletions_and_emptied_notes_are_counted_as_the_git_door_counts(changes: dict) -> None:
    base_texts = {f"notes/n{i}.md": b"# a\n" if i % 2 else b"# b\n" for i in range(25)}
    ids = {p: blob_id(t) for p, t in base_texts.items()}
    base = Base.of(ids, {blob_id(t): t for t in base_texts.values()})
    proposed = [Proposed(p, d) for p, d in changes.items()]
    got = plan(POLICY, TRUSTED, base, proposed, Intent())
    gone = [ids[p] for p, d in changes.items() if d is None and p in ids]
    added = [blob_id(d) for p, d in changes.items() if d is not None and p not in ids]
    emptied = sum(1 for p, d in changes.items() if d is not None and p in ids and not d.strip(b" \n\xef\xbb\xbf"))
    deleted = sum((Counter(gone) - Counter(added)).values())
    if deleted + emptied > POLICY.max_deletions_per_commit:
        assert isinstance(got, Refusal) and got.rule == "too-many-deletions"
    else:
        assert isinstance(got, Plan)
        assert (got.counts.deleted, got.counts.emptied, got.counts.added) == (deleted, emptied, len(added))


def test_a_refused_file_refuses_the_plan_with_its_rule_and_path() -> None:
    got = plan(POLICY, TRUSTED, Base.of({}), [Proposed(".obsidian/x.md", b"# x\n")], Intent())
    assert got == Refusal("incoming-hidden-path", got.reason, ".obsidian/x.md")


def test_the_bookkeeping_a_commit_implies_is_data() -> None:
    item, moved_to = "inbox/handoffs/a.md", "inbox/handoffs/b.md"
    got = plan(
        POLICY,
        TRUSTED,
        Base.of({item: blob_id(b"# a\n")}),
        [Proposed(item, None), Proposed(moved_to, b"# a\n"), Proposed("notes/x.md", b"# x\n")],
        Intent(op="move_note", paths=(item, moved_to), moved=(item, moved_to), hold=Hold(item, "v", "why", "me")),
    )
    assert isinstance(got, Plan)
    books = got.bookkeeping
    assert books.copy == ((item, moved_to),) and books.forget == (item,) and books.record == (moved_to,)
    assert books.holds == (Hold(item, "v", "why", "me"),)


def test_credentials_are_judged_when_the_door_asks() -> None:
    secret = ("token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n").encode()  # split: no secret in this file
    asked = plan(POLICY, TRUSTED, Base.of({}), [Proposed("n.md", secret)], Intent(scan_credentials=True))
    assert isinstance(asked, Refusal) and asked.rule == "credential-warning"
    insisted = Intent(scan_credentials=True, allow_secret=True)
    assert isinstance(plan(POLICY, TRUSTED, Base.of({}), [Proposed("n.md", secret)], insisted), Plan)
