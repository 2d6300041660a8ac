"""The diff of a pure append (vault/linediff.py) is difflib's, line for line, and a write that appends is
answered without difflib's matcher."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.services.notes import NotesService
from notegate.vault.linediff import appended_diff
from support.callers import make_caller

#: Few distinct lines, so repeats and difflib's "popular" lines (over 1 % of a text of 200 lines or more) occur.
LINES = st.sampled_from(["a\n", "b\n", "\n", "# h\n", "- x\n", "tail", "a", "\r\n", "c\r\n"])
TEXTS = st.lists(LINES, max_size=30) | st.lists(LINES, min_size=195, max_size=260)

OWNER = make_caller(tier="trusted", client_class="workstation", login="owner", client="laptop")


def _difflib(old: list[str], new: list[str]) -> list[str]:
    return list(difflib.unified_diff(old, new, fromfile="a/n.md (old)", tofile="b/n.md (new)"))


@settings(max_examples=100, deadline=None)
@given(old=TEXTS, added=st.lists(LINES, max_size=12))
def test_an_append_diff_is_difflibs(old: list[str], added: list[str]) -> None:
    new = old + added
    if old and not old[-1].endswith("\n") and added:  # as splitlines would cut the joined text
        new = [*old[:-1], old[-1] + added[0], *added[1:]]
    ours = appended_diff(old, new, "a/n.md (old)", "b/n.md (new)")
    if ours is None:  # the last old line grew: not a prefix, difflib's case
        assert new[: len(old)] != old
        return
    assert ours == _difflib(old, new)


@settings(max_examples=40, deadline=None)
@given(old=TEXTS, new=TEXTS)
def test_anything_but_an_append_is_left_to_difflib(old: list[str], new: list[str]) -> None:
    ours = appended_diff(old, new, "a/n.md (old)", "b/n.md (new)")
    if new[: len(old)] == old:
        assert ours == _difflib(old, new)
    else:
        assert ours is None


def test_a_confirmed_append_is_answered_with_difflibs_diff_without_its_matcher(
    notes: NotesService, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "".join(f"line {i}\n" for i in range(400)) + "\n" * 10
    revision = notes.write_note(OWNER, "ideas/long.md", text, "absent", confirmed=True).new_revision
    expected = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            (text + "added\n").splitlines(keepends=True),
            fromfile=f"a/ideas/long.md (revision {revision[:12]})",
            tofile="b/ideas/long.md (proposed)",
        )
    )

    def no_matcher(*args: object, **kwargs: object) -> None:
        raise AssertionError("difflib's matcher ran for an append")

    monkeypatch.setattr(difflib, "SequenceMatcher", no_matcher)
    done = notes.append_note(OWNER, "ideas/long.md", "added\n", revision, confirmed=True)
    assert done.status == "committed"
    assert done.diff == expected
