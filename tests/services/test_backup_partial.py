"""A backup cut short leaves ``NAME.partial``; the next `notegate backup` into the same folder removes it, and never
a backup under way or a finished one (issue 28: each cut left one more folder, as large as a backup, for good).

"Under way" is a backup holding its folder's lock (services/backup_partial.py): here the test process holds one the
way a running backup does, through the same ``claim``."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.services import backup_partial
from support import notegate
from support.backup import keypair, make_backup

STALE = "notegate-backup-20260101T000000Z.partial"


def _cut_short(to: Path, name: str = STALE) -> Path:
    """What a cut leaves: a .partial folder with some of a backup's files (nobody holds its lock)."""
    folder = to / name
    folder.mkdir(parents=True, mode=0o700)
    (folder / "state.sqlite.age").write_bytes(b"age-encryption.org/v1\n" + b"\0" * 4096)
    return folder


def test_the_next_backup_removes_what_a_backup_cut_short_left(vault: Path, tmp_path: Path) -> None:
    _key, recipient = keypair(tmp_path)
    to = tmp_path / "backups"
    whole = make_backup(vault, to, recipient)
    stale = _cut_short(to)
    elsewhere = _cut_short(tmp_path / "elsewhere", "kept")
    (to / "notegate-backup-link.partial").symlink_to(elsewhere, target_is_directory=True)
    (to / "notegate-backup-file.partial").write_text("not a folder\n")

    done = notegate("backup", "--config", str(vault), "--to", str(to), "--recipient", recipient, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["removed"] == [STALE]
    assert not stale.exists()
    assert whole.is_dir() and sorted(os.listdir(whole)) == sorted(os.listdir(answer["folder"]))
    assert (elsewhere / "state.sqlite.age").exists()  # a link is not followed, nor removed
    assert (to / "notegate-backup-link.partial").is_symlink() and (to / "notegate-backup-file.partial").is_file()

    again = notegate("backup", "--config", str(vault), "--to", str(to), "--recipient", recipient)
    assert again.returncode == 0, again.stderr
    assert "Removed" not in again.stdout  # nothing left to remove: one line, as before


def test_a_backup_under_way_is_never_removed(vault: Path, tmp_path: Path) -> None:
    """A folder another backup holds locked is left alone; once that backup is gone (its lock with it), the next
    backup removes what it left, and says so."""
    _key, recipient = keypair(tmp_path)
    to = tmp_path / "backups"
    to.mkdir()
    running = backup_partial.claim(to, "20260101T000000Z")
    (running.partial / "state.sqlite.age").write_bytes(b"being written\n")
    try:
        done = notegate("backup", "--config", str(vault), "--to", str(to), "--recipient", recipient)
        assert done.returncode == 0, done.stderr
        assert running.partial.is_dir() and (running.partial / "state.sqlite.age").exists()
        assert "Removed" not in done.stdout
    finally:
        running.release()  # the backup died: its lock went with it
    done = notegate("backup", "--config", str(vault), "--to", str(to), "--recipient", recipient)
    assert done.returncode == 0, done.stderr
    assert f"Removed 1 folder(s) left by backups cut short: {running.partial.name}" in done.stdout
    assert not running.partial.exists()
    assert len([p for p in to.iterdir() if p.name.endswith(".partial")]) == 0


def test_a_claim_takes_a_free_name_and_holds_it_against_a_sweep(tmp_path: Path) -> None:
    first = backup_partial.claim(tmp_path, "20260101T000000Z")
    second = backup_partial.claim(tmp_path, "20260101T000000Z")
    try:
        assert (first.partial.name, second.partial.name) == (
            "notegate-backup-20260101T000000Z.partial",
            "notegate-backup-20260101T000000Z-2.partial",
        )
        assert backup_partial.sweep(tmp_path) == []
        first.partial.rename(first.final)  # whole: renamed while locked, as take_backup does
    finally:
        first.release()
        second.release()
    assert backup_partial.sweep(tmp_path) == [second.partial.name]
    assert first.final.is_dir()


KINDS = st.sampled_from(["folder", "held", "file", "link"])
NAMES = st.one_of(
    st.from_regex(r"notegate-backup-[0-9TZ-]{0,8}\.partial", fullmatch=True),
    st.from_regex(r"notegate-backup-[0-9TZ-]{1,8}", fullmatch=True),  # finished backups
    st.from_regex(r"[a-z][a-z.]{0,11}(\.partial)?", fullmatch=True),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(NAMES, KINDS, max_size=6))
def test_a_sweep_removes_exactly_the_unheld_partial_folders(entries: dict[str, str]) -> None:
    """Whatever sits in the folder, a sweep removes the ``notegate-backup-*.partial`` folders nobody holds, and
    nothing else: not a held one, not a finished backup, not a file or a link by that name, not another name."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        to, outside = root / "to", root / "outside"
        to.mkdir()
        outside.mkdir()
        held = []
        for name, kind in entries.items():
            path = to / name
            if kind == "file":
                path.write_text("x")
            elif kind == "link":
                path.symlink_to(outside, target_is_directory=True)
            else:
                path.mkdir()
                (path / "f").write_text("x")
                if kind == "held":
                    held.append(os.open(path, os.O_RDONLY | os.O_DIRECTORY))
                    fcntl.flock(held[-1], fcntl.LOCK_EX)
        try:
            removed = backup_partial.sweep(to)
        finally:
            for fd in held:
                os.close(fd)
        expected = sorted(
            name
            for name, kind in entries.items()
            if kind == "folder" and name.startswith("notegate-backup-") and name.endswith(".partial")
        )
        assert removed == expected
        assert sorted(os.listdir(to)) == sorted(set(entries) - set(expected))
        assert os.listdir(outside) == []
