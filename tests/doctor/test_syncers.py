"""No file syncer's scope over a repository: the marker table per syncer, the walk, and the doctor red."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from notegate.doctor.scopes import check_scope
from notegate.doctor.syncers import SYNCERS, entry_marker, root_marker, wants_children
from support.doctor import Doctor, failed

# (syncer, how its scope shows: an entry in a folder at or above the repository, or a folder's name).
# kind: "file" / "dir" = an entry of that kind named so; "root" = the repository sits under a folder so
# named; "nested" = a folder with the named child inside.
CASES: list[tuple[str, str, str]] = [
    ("Syncthing", "dir", ".stfolder"),
    ("Syncthing", "file", ".stfolder"),  # older Syncthing wrote a file
    ("Syncthing", "file", ".stignore"),
    ("Syncthing", "dir", ".stversions"),
    ("Dropbox", "file", ".dropbox"),
    ("Dropbox", "dir", ".dropbox.cache"),
    ("Dropbox", "root", "Dropbox"),
    ("Dropbox", "root", "Dropbox (Contoso)"),
    ("Dropbox", "root", "Dropbox-Personal"),
    ("iCloud Drive", "root", "Mobile Documents"),
    ("iCloud Drive", "root", "com~apple~CloudDocs"),
    ("OneDrive", "root", "OneDrive"),
    ("OneDrive", "root", "OneDrive - Contoso"),
    ("OneDrive", "root", "OneDrive-Personal"),
    ("OneDrive", "file", ".849C9593-D756-4E56-8D6E-42412F2A707B"),
    ("Resilio Sync", "nested", ".sync/ID"),
    ("Resilio Sync", "nested", ".sync/IgnoreList"),
    ("Google Drive", "dir", ".tmp.drivedownload"),
    ("Google Drive", "dir", ".tmp.driveupload"),
    ("Google Drive", "root", "My Drive"),
    ("Google Drive", "root", "Google Drive"),
    ("Google Drive", "root", "GoogleDrive-me@example.org"),
    ("Nextcloud / ownCloud", "file", ".nextcloudsync.log"),
    ("Nextcloud / ownCloud", "file", ".owncloudsync.log"),
    ("Nextcloud / ownCloud", "file", ".sync_4f2a9c1d.db"),
    ("Nextcloud / ownCloud", "file", "._sync_4f2a9c1d.db"),
    ("Nextcloud / ownCloud", "file", ".sync_4f2a9c1d.db-wal"),
]

#: Names that look alike and are not a syncer's scope.
NOT_MARKERS: list[tuple[str, str]] = [
    ("dir", ".dropbox"),  # ~/.dropbox is the client's settings folder, next to (not around) its scope
    ("dir", ".sync"),  # a .sync folder without Resilio's files in it
    ("file", ".sync"),
    ("root", "dropbox"),  # the syncers create their folders with this exact spelling
    ("root", "my-dropbox-notes"),
    ("root", "OneDriveBackup"),
    ("file", "stfolder"),
    ("file", ".sync_x.dbx"),
    ("dir", ".sync_4f2a9c1d.db"),
    ("file", "Dropbox"),
]


def test_every_syncer_of_the_brief_has_cases() -> None:
    assert {s.name for s in SYNCERS} == {name for name, _, _ in CASES}
    assert all(s.source for s in SYNCERS)


@pytest.mark.parametrize(("syncer", "kind", "name"), CASES)
def test_marker_table(syncer: str, kind: str, name: str) -> None:
    if kind == "root":
        assert root_marker(name) == syncer
    elif kind == "nested":
        folder, child = name.split("/")
        assert wants_children(folder)
        assert entry_marker(folder, True, [child, "other"]) == syncer
        assert entry_marker(folder, True, ["other"]) is None
    else:
        assert entry_marker(name, kind == "dir") == syncer
        assert entry_marker(name.upper(), kind == "dir") == syncer  # case-insensitive file systems


@pytest.mark.parametrize(("kind", "name"), NOT_MARKERS)
def test_look_alikes_are_not_markers(kind: str, name: str) -> None:
    if kind == "root":
        assert root_marker(name) is None
    else:
        assert entry_marker(name, kind == "dir", ["other"]) is None


def test_overlong_names_are_not_read() -> None:
    assert entry_marker(".sync_" + "a" * 10_000 + ".db", False) is None
    assert root_marker("OneDrive - " + "x" * 10_000) is None


def _plant(base: Path, kind: str, name: str) -> Path:
    """A repository at base/.../repo placed in the syncer's scope; returns the repository."""
    if kind == "root":
        repo = base / name / "notes" / "repo"
        repo.mkdir(parents=True)
        return repo
    repo = base / "sync-root" / "repo"
    repo.mkdir(parents=True)
    where = base / "sync-root"  # at an ancestor ...
    if kind == "nested":
        folder, child = name.split("/")
        (where / folder).mkdir()
        (where / folder / child).write_text("x", encoding="utf-8")
    elif kind == "dir":
        (where / name).mkdir()
    else:
        (where / name).write_text("x", encoding="utf-8")
    return repo


@pytest.mark.parametrize(("syncer", "kind", "name"), CASES)
def test_scope_above_a_repository(tmp_path: Path, syncer: str, kind: str, name: str) -> None:
    result = check_scope("vault", _plant(tmp_path, kind, name))
    assert result.check == "syncer.scope" and result.status == "fail"
    assert syncer in result.found and result.remedy


@pytest.mark.parametrize(("syncer", "kind", "name"), [c for c in CASES if c[1] != "root"])
def test_scope_inside_a_repository(tmp_path: Path, syncer: str, kind: str, name: str) -> None:
    repo = tmp_path / "repo"
    deep = repo / "notes" / "deep"
    deep.mkdir(parents=True)
    if kind == "nested":
        folder, child = name.split("/")
        (deep / folder).mkdir()
        (deep / folder / child).write_text("x", encoding="utf-8")
    elif kind == "dir":
        (deep / name).mkdir()
    else:
        (deep / name).write_text("x", encoding="utf-8")
    result = check_scope("vault", repo)
    assert result.status == "fail" and syncer in result.found


def test_a_clean_tree_is_ok_and_symlinks_are_not_followed(tmp_path: Path) -> None:
    synced = tmp_path / "elsewhere"
    synced.mkdir()
    (synced / ".stfolder").mkdir()
    repo = tmp_path / "repo"
    (repo / "notes").mkdir(parents=True)
    (repo / "notes" / "link").symlink_to(synced)
    assert check_scope("vault", repo).status == "ok"


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(30):
        (repo / f"n{i}.md").write_text("x", encoding="utf-8")
    assert check_scope("vault", repo, max_entries=10).status == "warn"


@pytest.mark.parametrize(
    ("syncer", "kind", "name"),
    [
        ("Syncthing", "dir", ".stfolder"),
        ("Dropbox", "root", "Dropbox"),
        ("iCloud Drive", "root", "com~apple~CloudDocs"),
        ("OneDrive", "root", "OneDrive - Contoso"),
        ("Resilio Sync", "nested", ".sync/ID"),
        ("Google Drive", "dir", ".tmp.drivedownload"),
        ("Nextcloud / ownCloud", "file", ".sync_4f2a9c1d.db"),
    ],
)
def test_the_doctor_is_red_for_each_syncer(
    doctor: Doctor, demo: Path, tmp_path: Path, syncer: str, kind: str, name: str
) -> None:
    """`make run`'s setup placed inside each syncer's scope: the doctor names syncer.scope and exits 1."""
    demo_dir = demo.parent
    if kind == "root":
        target = tmp_path / name / "demo"
        target.parent.mkdir()
        shutil.move(demo_dir, target)
        demo_dir = target
    elif kind == "nested":
        folder, child = name.split("/")
        (demo_dir / folder).mkdir()
        (demo_dir / folder / child).write_text("x", encoding="utf-8")
    elif kind == "dir":
        (demo_dir / name).mkdir()
    else:
        (demo_dir / name).write_text("x", encoding="utf-8")
    if kind == "root":  # the hook names the config by its absolute path: reinstall it where it now is
        from notegate.sync import hookfile

        hookfile.install_hook(demo_dir / "origin.git", demo_dir / "notegate.toml", "personal")
    code, results = doctor("--config", str(demo_dir / "notegate.toml"))
    assert code == 1 and failed(results) == {"syncer.scope"}, results
    scoped = [r for r in results if r["check"] == "syncer.scope"]
    assert {r["subject"] for r in scoped if r["status"] == "fail"} == {"personal clone", "personal origin"}
    assert all(syncer in r["found"] for r in scoped)
