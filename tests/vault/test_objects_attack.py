"""Hostile inputs to the group commit's raw objects (vault/objects.py) and its file pool (vault/filepool.py):
what a push could plant in a base tree, what a caller could send as a name or a message, and what a local
process could plant at a pool file's name.  Each is held to libgit2's own answer (``store.build_tree``,
``store._entry_blob``, ``create_commit``) or to a refusal, never a different object."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode, ObjectType

from notegate.vault import bulk, filepool, objects, store
from notegate.vault.store import ABSENT, Change, _entry_blob, build_tree
from support import warm_pool
from support.timing import assert_catches_quadratic, assert_linear


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("attack") / "r.git"), bare=True)


def _group(repo: pygit2.Repository) -> objects.Group:
    return objects.Group(objects.TreeCache(repo, 1 << 20))


def _tree_of(repo: pygit2.Repository, entries: list[tuple[bytes, bytes, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object written byte by byte, as a hostile push may have planted it."""
    return repo.odb.write(ObjectType.TREE, b"".join(m + b" " + n + b"\0" + o.raw for m, n, o in entries))


# ---------------------------------------------------------------- names: what Windows reads as .git
# libgit2 runs with core.protectNTFS on by default, so its tree builder also refuses ".git" followed by dots or
# spaces, git's 8.3 short name "git~1", and either followed by ":" (an NTFS stream) or "\" (CVE-2019-1352/1353).
# objects._check_name refused only ".git" itself, so the group pack could hold a tree libgit2 would never write.
NTFS_DOTGIT = [".git.", ".git ", ".GIT. .", "git~1", "GIT~1", "Git~1..", ".git::$DATA", ".git\\x", "git~1:y"]


@pytest.mark.parametrize("name", NTFS_DOTGIT)
def test_ntfs_aliases_of_dotgit_are_refused_as_libgit2_refuses_them(repo: pygit2.Repository, name: str) -> None:
    changes = [Change(f"d/{name}", b"y\n")]
    with pytest.raises(pygit2.GitError, match="invalid name for a tree entry"):
        build_tree(repo, None, changes)
    group = _group(repo)
    with pytest.raises(ValueError, match="is not a valid name for a tree entry"):
        objects.build(group, None, changes)
    assert group.made == []  # nothing made for the pack


@pytest.mark.parametrize("name", [".gitx", ".git.x", ".gitmodules", "git~10", "xgit~1", "a\\b", "é.md", "x" * 300])
def test_names_near_dotgit_are_written_as_libgit2_writes_them(repo: pygit2.Repository, name: str) -> None:
    changes = [Change(f"d/{name}", b"y\n")]
    assert objects.build(_group(repo), None, changes) == build_tree(repo, None, changes).raw


def test_a_name_that_is_not_utf8_is_refused_before_anything_is_made(repo: pygit2.Repository) -> None:
    changes = [Change("d/\udcff.md", b"y\n")]
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        build_tree(repo, None, changes)
    group = _group(repo)
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        objects.build(group, None, changes)
    assert group.made == []


# ---------------------------------------------------------------- modes: only the owner's x bit is "executable"
# libgit2's normalize_filemode tests GIT_PERMS_IS_EXEC, ``mode & 0100``; objects.normal_mode tested
# ``mode & 0111``, so a planted 160001 (a submodule) or 120001 (a symlink) read as an executable blob: the
# write path's expectation check (objects.blob_at) then saw a blob where a read (_entry_blob) said absent, and
# the index walk (store._walk_raw) listed a symlink as a note.
ODD_MODES = [b"160001", b"120001", b"120010", b"160100", b"100645", b"100001", b"100010", b"40001", b"0100100"]


@pytest.mark.parametrize("mode", ODD_MODES)
def test_an_odd_mode_is_read_as_libgit2_reads_it(repo: pygit2.Repository, mode: bytes) -> None:
    blob = repo.create_blob(b"x\n")
    target = build_tree(repo, None, [Change("f.md", b"x\n")]) if int(mode, 8) & 0o170000 == 0o040000 else blob
    tree_id = _tree_of(repo, [(mode, b"m", target)])
    tree = repo[tree_id].peel(pygit2.Tree)
    assert objects.normal_mode(mode) == int(tree["m"].filemode)
    assert objects.blob_at(objects.TreeCache(repo, 1 << 20), tree_id.raw, "m") == _entry_blob(tree, "m")
    walked = dict(store._walk_raw(repo, repo.odb.read(tree_id)[1], ""))
    seen_by_libgit2 = tree["m"].filemode in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)
    assert walked == ({"m": str(blob)} if seen_by_libgit2 else {"m/f.md": str(blob)} if target != blob else {})
    for changes in ([Change("n.md", b"y\n")], [Change("m", None)], [Change("m", b"y\n")]):
        assert objects.build(_group(repo), tree_id.raw, changes) == build_tree(repo, tree, changes).raw


def test_a_planted_symlink_or_submodule_is_absent_to_the_write_path(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"target\n")
    tree_id = _tree_of(repo, [(b"120001", b"link.md", blob), (b"160001", b"sub.md", blob)])
    cache = objects.TreeCache(repo, 1 << 20)
    assert objects.blob_at(cache, tree_id.raw, "link.md") == ABSENT
    assert objects.blob_at(cache, tree_id.raw, "sub.md") == ABSENT


def test_a_submodule_or_symlink_used_as_a_folder_is_refused_as_libgit2_refuses_it(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"x\n")
    for mode in (b"160000", b"120000", b"160001"):
        tree_id = _tree_of(repo, [(mode, b"a", blob)])
        tree = repo[tree_id].peel(pygit2.Tree)
        changes = [Change("a/b.md", b"y\n")]
        with pytest.raises(ValueError, match="a is a file, not a folder"):
            build_tree(repo, tree, changes)
        with pytest.raises(ValueError, match="a is a file, not a folder"):
            objects.build(_group(repo), tree_id.raw, changes)


# ---------------------------------------------------------------- commits
def test_a_nul_in_a_commit_message_is_refused_not_cut(repo: pygit2.Repository) -> None:
    """libgit2 reads the message as a C string: ``create_commit`` keeps "keep" of "keep\\0lost", where the raw
    bytes kept both, so the commit id differed from libgit2's and git fsck warns of a NUL in a commit."""
    tree = build_tree(repo, None, [Change("n.md", b"n\n")])
    sig = pygit2.Signature("a", "a@notegate", 100, 60)
    cut = repo.create_commit(None, sig, sig, "keep\0lost", tree, [])
    assert repo[cut].message == "keep"
    with pytest.raises(ValueError, match="a commit message holds a NUL character"):
        objects.commit_bytes(tree.raw, [], sig, sig, "keep\0lost")


@pytest.mark.parametrize("name", ["a\nb", "a\rb", "a\tb", "a\x7fb", "a\x1bb"])
def test_a_control_character_never_reaches_a_commit_header(repo: pygit2.Repository, name: str) -> None:
    tree = build_tree(repo, None, [Change("n.md", b"n\n")])
    ok = pygit2.Signature("a", "a@notegate", 100, 60)
    for author in (pygit2.Signature(name, "a@notegate", 100, 60), pygit2.Signature("a", f"{name}@notegate", 100, 60)):
        with pytest.raises(ValueError, match="holds a control character"):
            objects.commit_bytes(tree.raw, [], author, ok, "m")


# ---------------------------------------------------------------- linear time on a hostile tree
def _hostile_tree(size: int) -> str:
    """~``size`` bytes of tree: modes with a leading zero, names in reverse order, every name twice (the slow
    path of RawTree.parse: rewritten modes, then the last of two same-named entries kept and sorted)."""
    oid = b"\x01" * 20
    count = max(2, size // 40)
    entries = [b"0100644 n%09d\0%s" % (i // 2, oid) for i in range(count, 0, -1)]
    return b"".join(entries).decode("latin-1")


def test_parsing_a_hostile_tree_is_linear() -> None:
    parsed = objects.RawTree.parse(_hostile_tree(16 * 1024).encode("latin-1"))  # parsed, not refused
    assert parsed.keys == sorted(set(parsed.keys)) and all(e.startswith(b"100644 ") for e in parsed.entries)
    assert_linear(lambda text: objects.RawTree.parse(text.encode("latin-1")), _hostile_tree)


def test_the_measure_catches_a_quadratic_parser_on_this_shape() -> None:
    assert_catches_quadratic(_hostile_tree)


CORRUPT_SHAPES = {
    # findall restarted at each byte after a bad entry and scanned to the next NUL from each: 16 KiB of
    # "0 " cost 1.2 s of CPU and 128 KiB 59 s, before the whole tree was checked first (objects._WHOLE_TREE).
    "modes-and-spaces": lambda n: "0 " * (n // 2),
    "then-a-short-id": lambda n: "0 " * (n // 2) + "\0" + "x" * 19,
    "good-entry-then-garbage": lambda n: "100644 a\0" + "x" * 20 + "0 " * (n // 2),
}


@pytest.mark.parametrize("shape", CORRUPT_SHAPES)
def test_refusing_a_corrupt_tree_is_linear(shape: str) -> None:
    build = CORRUPT_SHAPES[shape]
    for parse in (objects.RawTree.parse, objects.raw_records):
        with pytest.raises(pygit2.GitError, match="corrupt tree object"):
            parse(build(1024).encode("latin-1"))

        def refuse(text: str, parse=parse) -> None:
            with contextlib.suppress(pygit2.GitError):
                parse(text.encode("latin-1"))

        assert_linear(refuse, build)


@pytest.mark.parametrize("name", [b"", b"x" * 65536])
def test_a_tree_libgit2_cannot_parse_is_refused_not_copied(repo: pygit2.Repository, name: bytes) -> None:
    """An empty entry name, or one past 65,535 bytes: libgit2 refuses to parse the tree; the raw parse read it,
    and an edit copied the entry into a new tree (git fsck: emptyName), which went into the group pack."""
    blob = repo.create_blob(b"x\n")
    tree_id = _tree_of(repo, [(b"100644", name, blob), (b"100644", b"b", blob)])
    with pytest.raises(pygit2.GitError, match="failed to parse tree: can't parse filename"):
        repo[tree_id].peel(pygit2.Tree)
    with pytest.raises(pygit2.GitError, match="corrupt tree object"):
        objects.build(_group(repo), tree_id.raw, [Change("c.md", b"y\n")])
    with pytest.raises(pygit2.GitError, match="corrupt tree object"):
        objects.blob_at(objects.TreeCache(repo, 1 << 20), tree_id.raw, "b")
    with pytest.raises(pygit2.GitError, match="corrupt tree object"):
        list(store._walk_raw(repo, repo.odb.read(tree_id)[1], ""))


def test_a_name_of_65535_bytes_is_still_read(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"x\n")
    tree_id = _tree_of(repo, [(b"100644", b"x" * 65535, blob)])
    tree = repo[tree_id].peel(pygit2.Tree)
    changes = [Change("c.md", b"y\n")]
    assert objects.build(_group(repo), tree_id.raw, changes) == build_tree(repo, tree, changes).raw


# ---------------------------------------------------------------- the file pool
def test_a_symlink_planted_at_a_pool_file_is_not_written_through(tmp_path: Path) -> None:
    """Pool files have guessable names (``tmp_pool_<pid>_<n>``) and were opened without O_NOFOLLOW: a symlink
    put in place of one made the next pack write truncate, fill and chmod 0444 the file it pointed at."""
    folder = tmp_path / "pack"
    folder.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    victim.chmod(0o600)
    pool = warm_pool(folder)
    with pool._lock:
        planted = pool._ready[-1]  # the one take() hands out next
        os.unlink(planted)
        os.symlink(victim, planted)
    target = folder / "pack-x.pack"
    filepool.write_new(folder, target, b"PACK data")
    assert victim.read_bytes() == b"precious\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert not target.is_symlink() and target.read_bytes() == b"PACK data"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_symlink_planted_at_the_copy_name_in_the_origin_is_not_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the origin's pack folder takes no hard link (another file system), the pack was copied through
    the fixed name ``tmp_bulk_<pack>.pack`` with ``shutil.copyfile``, which follows a symlink planted there:
    the group's pack overwrote the file it pointed at (and two processes copying one pack shared the file)."""
    clone, origin = tmp_path / "clone", tmp_path / "origin"
    for repo_dir in (clone, origin):
        pygit2.init_repository(str(repo_dir), bare=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    records = [objects.pack_record(objects.OBJ_BLOB, b"note\n", objects.object_id(objects.OBJ_BLOB, b"note\n"))]
    name = bulk.pack_records(records)[2]
    for suffix in (".pack", ".idx"):
        os.symlink(victim, origin / "objects" / "pack" / f"tmp_bulk_{name}{suffix}")

    def no_link(src, dst, *args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    assert bulk.write_records([clone, origin], records, strict=True) == name
    assert victim.read_bytes() == b"precious\n"
    for suffix in (".pack", ".idx"):
        copied = origin / "objects" / "pack" / f"{name}{suffix}"
        assert not copied.is_symlink()
        assert copied.read_bytes() == (clone / "objects" / "pack" / f"{name}{suffix}").read_bytes()
        assert stat.S_IMODE(copied.stat().st_mode) == 0o444
    assert pygit2.Repository(str(origin)).odb.read(pygit2.Oid(raw=records[0][0]))[1] == b"note\n"
