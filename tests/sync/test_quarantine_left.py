"""What a push cut short leaves in the origin: git's quarantine folder, which git never removes at the next push
(only ``git gc``'s prune does, two weeks later, and notegate never runs it).  Each push the hook judges removes
those a day old; the doctor names them (issue 28)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.sync.quarantine import STALE_QUARANTINE_SECONDS, stale_quarantines, sweep_stale
from support import notegate
from support.gitstreams import FILE, Origin, accepted, commit

PREFIXES = ("tmp_objdir-incoming-", "incoming-")


def _quarantines(origin: Path) -> set[Path]:
    return {p for p in (origin / "objects").iterdir() if p.name.startswith(PREFIXES)}


def _cut_push(door: Origin, name: str) -> Path:
    """A push whose ``git receive-pack`` is killed while its hook runs (as a power cut or ``kill -9`` ends it):
    git's cleanup never runs, and its quarantine stays.  Returns that folder."""
    hook = door.origin / "hooks" / "pre-receive"
    saved = hook.read_bytes()
    before = _quarantines(door.origin)
    hook.write_text("#!/bin/sh\nkill -9 $PPID\nsleep 1\n")
    try:
        tip = commit(door.scratch, [door.main], add={f"notes/{name}.md": (FILE, f"{name}\n".encode())})
        assert door.push(tip).returncode != 0
    finally:
        hook.write_bytes(saved)
    [left] = _quarantines(door.origin) - before
    return left


def _age(folder: Path, seconds: float) -> None:
    then = time.time() - seconds
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            os.utime(os.path.join(parent, name), (then, then), follow_symlinks=False)
    os.utime(folder, (then, then))


def test_the_next_push_removes_what_a_cut_push_left_a_day_ago(door: Origin) -> None:
    old = _cut_push(door, "cut-yesterday")
    _age(old, STALE_QUARANTINE_SECONDS + 60)
    young = _cut_push(door, "cut-now")  # as young as a push under way: kept

    doctor = notegate("doctor", "--json", "--config", str(door.config))
    [found] = [c for c in json.loads(doctor.stdout) if c["check"] == "origin.quarantine"]
    assert found["status"] == "warn", found
    assert found["found"].startswith("1 quarantine folder(s) left in ") and old.name in found["found"]
    assert young.name not in found["found"] and "next push" in found["remedy"]

    tip = commit(door.scratch, [door.main], add={"notes/after.md": (FILE, b"after\n")})
    accepted(door.push(tip))
    assert not old.exists()
    assert young.is_dir()
    assert _quarantines(door.origin) == {young}


ENTRY = st.tuples(
    st.sampled_from(["tmp_objdir-incoming-", "incoming-", "tmp_objdir-bulk-fsync-", "pack", "in", ""]),
    st.from_regex(r"[A-Za-z0-9]{0,6}", fullmatch=True),
    st.sampled_from(["folder", "file", "link"]),
    st.booleans(),  # older than the bound
)


@settings(max_examples=60, deadline=None)
@given(st.lists(ENTRY, max_size=6, unique_by=lambda e: e[0] + e[1]), st.integers(min_value=-1, max_value=5))
def test_only_old_quarantine_folders_are_removed(entries: list[tuple[str, str, str, bool]], keep_index: int) -> None:
    """Whatever sits in ``objects/``, a sweep removes exactly the quarantine folders untouched for the bound,
    never the running push's own (``keep``), a file or a link by such a name, nor anything else."""
    with tempfile.TemporaryDirectory() as scratch:
        objects, outside = Path(scratch) / "objects", Path(scratch) / "outside"
        objects.mkdir()
        outside.mkdir()
        (outside / "f").write_text("x")
        names = []
        for prefix, rest, kind, old in entries:
            name = prefix + rest
            if not name:
                continue
            path = objects / name
            if kind == "folder":
                (path / "pack").mkdir(parents=True)
                (path / "pack" / "tmp_pack_x").write_bytes(b"x" * 10)
            elif kind == "file":
                path.write_text("x")
            else:
                path.symlink_to(outside, target_is_directory=True)
            if old and kind != "link":
                _age(path, STALE_QUARANTINE_SECONDS + 1)
            names.append((name, kind, old))
        keep = objects / names[keep_index][0] if 0 <= keep_index < len(names) else None
        expected = {
            name
            for name, kind, old in names
            if kind == "folder" and old and name.startswith(PREFIXES) and (keep is None or keep.name != name)
        }
        now = time.time()
        assert {q.path.name for q in stale_quarantines(Path(scratch), now=now, keep=keep)} == expected
        assert {q.path.name for q in sweep_stale(Path(scratch), now=now, keep=keep)} == expected
        assert {p.name for p in objects.iterdir()} == {n for n, _k, _o in names} - expected
        assert (outside / "f").exists()
