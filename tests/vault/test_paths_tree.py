"""The listing's segment-cached classifier (``TreePaths``) against the full path checks it stands in for:
for any text, the same verdict as ``servable`` / ``servable_file`` (``NotePath.parse`` and
``AttachmentPath.parse`` of the whole path), in any order of a walk, with its folder cache warm or cold."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.vault.paths import MAX_PATH_BYTES, TreePaths
from notegate.vault.store import servable, servable_file
from support.paths import LEAVES, PATH_TEXTS, SEGMENTS
from support.timing import assert_catches_quadratic, assert_linear


def full_check(path: str) -> str | None:
    if servable(path):
        return "note"
    if servable_file(path):
        return "attachment"
    return None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PATH_TEXTS, min_size=1, max_size=8))
def test_tree_paths_answer_as_the_full_check(paths: list[str]) -> None:
    """One classifier over a whole walk (its cache warm from earlier paths) and a fresh one per path."""
    walk = TreePaths()
    for path in paths:
        expected = full_check(path)
        assert walk.kind(path) == expected, path
        assert TreePaths().kind(path) == expected, path


@settings(max_examples=500, deadline=None)
@given(st.lists(SEGMENTS, min_size=1, max_size=3), st.lists(LEAVES, min_size=1, max_size=6))
def test_siblings_under_one_folder_answer_as_the_full_check(folders: list[str], leaves: list[str]) -> None:
    """Many files below one folder (the cache's case): each file's verdict is still its own."""
    walk = TreePaths()
    folder = "/".join(folders)
    for leaf in leaves:
        path = f"{folder}/{leaf}"
        assert walk.kind(path) == full_check(path), path


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("notes/a.md", "note"),
        ("images/a.png", "attachment"),
        ("notes/.obsidian/a.md", None),  # a hidden folder
        ("notes/.a.md", None),  # a hidden file
        ("notes/../a.md", None),
        ("notes/CON.md", None),  # refused only as a name
        ("notes/a.MD", None),  # neither a note nor an attachment
        ("cafe\u0301/a.md", None),  # NFD folder: git holds another normal form
        ("caf\u00e9/a.md", "note"),
        ("\uff0egit/a.md", None),  # folds to .git
        ("a/\u212a.md", None),  # KELVIN SIGN: not in normal form
        ("/a.md", None),
        ("a//b.md", None),
        ("a/", None),
        ("a/b.md/", None),
        ("notes/nul.txt", None),  # a device name with an extension (the plain-name shortcut checks it)
        ("notes/GIT~1/a.md", None),  # git's short name of .git, as a folder
        ("notes/git~2.png", "attachment"),  # only the bare short name is refused
        ("notes/a (draft), v2 & more!.md", "note"),
        ("notes/-x-.md", "note"),
        ("notes/x.md.png", "attachment"),
    ],
)
def test_known_paths(path: str, kind: str | None) -> None:
    assert full_check(path) == kind
    walk = TreePaths()
    walk.kind("notes/warm.md")
    assert walk.kind(path) == kind


def test_names_refused_only_as_a_whole_path() -> None:
    """Each segment passes and the folder is cached as good, but the whole path is too long."""
    walk = TreePaths()
    folder = "/".join(["f" * 200] * 4)  # 803 bytes: a good folder
    assert walk.kind(f"{folder}/short.md") == "note"
    long_leaf = "é" * 110 + ".md"  # 223 bytes: a good name, 1027 bytes with the folder
    assert len(f"{folder}/{long_leaf}".encode()) > MAX_PATH_BYTES
    assert walk.kind(f"{folder}/{long_leaf}") is None == full_check(f"{folder}/{long_leaf}")
    assert unicodedata.is_normalized("NFC", long_leaf)


def _walk_text(size: int) -> str:
    """A walk's paths, one a line: 20 files a folder, as a generated vault has."""
    lines: list[str] = []
    total = i = 0
    while total < size:
        line = f"folder-{i // 20}/sub/note-{i}.md"
        lines.append(line)
        total += len(line) + 1
        i += 1
    return "\n".join(lines)[:size].rpartition("\n")[0]


def _classify_walk(text: str) -> None:
    tree = TreePaths()
    for path in text.split("\n"):
        tree.kind(path)


def test_classifying_a_walk_is_linear() -> None:
    """8x the files under 8x the folders cost about 8x (tests/support/timing.py's ratio, never an absolute time)."""
    assert_linear(_classify_walk, _walk_text)
    assert_catches_quadratic(_walk_text)
