"""The server, the pre-receive hook, the server's fetch and `notegate sync` judge the same change alike.

One base is committed through the server; hypothesis then proposes changes against it -- notes and
attachments added, edited, emptied, deleted and renamed (some renamed and edited), at private, session-loaded
and hidden paths, at instruction-file names and refused file types, with floor-held text, invisible
characters, secrets, NUL bytes, bad UTF-8 and notes over the size limit -- and asks each door, without
committing anything: the recipe's planner (``NotesService.plan_commit``), the hook (``check_push`` on a
candidate commit, the owner pushing), the fetch vet (``vet_fetch`` from the server's main) and sync
(``Syncer.plan_local`` on a workstation clone).  They must accept and refuse the same changes, for the same
rule.  Credentials are judged by the doors a person writes through (the server's note tools, sync: both
``credential-warning`` for the owner); a push or a fetch carries what a person committed with git by hand,
so they never refuse one.  The one other difference is how much is reported: the hook stops reading a
change at ``too-many-files``, and the planner names only its first refusal.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.policy.plan import Intent
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.sync.daemon import Syncer
from notegate.sync.fetchvet import vet_fetch
from notegate.sync.prereceive import check_push
from notegate.vault.store import Change
from support import set_policy
from support.callers import make_caller
from support.gitstreams import CLEAN_ENV, FILE, commit

OWNER = make_caller()
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
BODY = "".join(f"line {n} of a note long enough for git to pair it when it moves\n" for n in range(12))
BASE = {
    "notes/a.md": f"# a\n{BODY}".encode(),
    "notes/b.md": f"# b\n{BODY}b\n".encode(),
    "notes/c.md": b"# c\nshort\n",
    "private/p.md": b"# private\nmine\n",
    "handoffs/demo.md": b"## Where it stopped\nhere\n",
    "inbox/handoffs/demo.md": b"## Where it stopped\nan item\n",
    "media/pic.png": PNG,
}
NEW_NOTES = (
    "notes/new1.md",
    "notes/new2.md",
    "moved/a.md",
    "private/new.md",
    "handoffs/other.md",
    "design/demo.md",
    ".obsidian/x.md",
    "notes/obsidi~1/x.md",
    "notes/CLAUDE.md",
    "notes/Caf\u0065\u0301.md",  # not NFC
)
SECRET = ("token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n").encode()  # split: no secret in this file
TEXTS = (
    b"# plain\nwords\n",
    BASE["notes/a.md"] + b"one more line\n",  # renamed and edited
    BASE["notes/b.md"],  # renamed as is
    b"",
    b"  \n\xef\xbb\xbf\n",  # blank: an emptied note
    b"# held\n\nRead AGENTS.md before anything.\n",  # floor-held where sessions load it
    "# zero\u200bwidth\n".encode(),
    SECRET,
    b"# nul\x00\n",
    b"# bad \xff utf-8\n",
    b"# big\n" + b"x" * 5000,  # over max_note_bytes
)
MEDIA = ("media/pic.png", "media/new.png", "media/x.exe")
BLOBS = (PNG, PNG + b"!", b"<html>not a png</html>")

notes_changes = st.dictionaries(
    st.sampled_from(sorted({*BASE, *NEW_NOTES} - set(MEDIA))), st.sampled_from(TEXTS) | st.none(), max_size=8
)
deletions = st.sets(st.sampled_from(sorted(BASE)), max_size=5)
media_changes = st.dictionaries(st.sampled_from(MEDIA), st.sampled_from(BLOBS) | st.none(), max_size=2)
_RULE = re.compile(r"Refused \[([a-z0-9-]+)\]")


@pytest.fixture
def doors(vault: Path, tmp_path: Path):
    first = Runtime(load_config(vault))
    try:
        base = [Change(p, d) for p, d in BASE.items()]
        NotesService(first).commit_as(OWNER, first.environment(None), base, dict.fromkeys(BASE, "absent"), "base")
    finally:
        first.close()
    set_policy(vault, max_deletions_per_commit=2, max_files_per_commit=3, max_note_bytes=4096)
    config = load_config(vault)
    assert (config.policy.max_deletions_per_commit, config.policy.max_note_bytes) == (2, 4096)
    rt = Runtime(config)
    env = rt.environment(None)
    notes = NotesService(rt)
    origin = vault.parent / "origin.git"
    ws = tmp_path / "laptop"
    subprocess.run(["git", "clone", "-q", str(origin), str(ws)], check=True, timeout=60, env=CLEAN_ENV)
    syncer = Syncer(ws, config.policy, owner=OWNER.login, device="laptop", git_env=CLEAN_ENV)
    try:
        yield config, rt, env, notes, origin, syncer
    finally:
        rt.close()


def _server(notes: NotesService, env, changes: dict[str, bytes | None]) -> str | None:
    try:
        notes.plan_commit(OWNER, env, [Change(p, d) for p, d in changes.items()], Intent(scan_credentials=True))
    except NotegateError as exc:
        return exc.rule
    return None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(deleted=set(), changed=dict.fromkeys(NEW_NOTES[:4], TEXTS[0]), media={})  # too-many-files
@example(deleted={"notes/a.md", "notes/b.md", "notes/c.md"}, changed={"moved/a.md": TEXTS[1]}, media={})  # -M
@example(deleted={"notes/b.md", "media/pic.png"}, changed={"notes/a.md": b" \n", "notes/c.md": b""}, media={})
@given(deleted=deletions, changed=notes_changes, media=media_changes)
def test_server_hook_fetch_and_sync_give_the_same_verdict(doors, deleted: set, changed: dict, media: dict) -> None:
    config, rt, env, notes, origin_path, syncer = doors
    proposed = {**dict.fromkeys(deleted), **changed, **media}
    changes = {p: d for p, d in proposed.items() if d is not None or p in BASE}
    if not changes:
        return
    origin = pygit2.Repository(str(origin_path))
    base = str(origin.references["refs/heads/main"].target)
    candidate = commit(
        origin,
        [base],
        add={p: (FILE, d) for p, d in changes.items() if d is not None},
        delete=tuple(p for p, d in changes.items() if d is None),
    )
    server = _server(notes, env, changes)
    owner = config.environments[env.name].owner
    hook = check_push(
        config, env.name, f"{base} {candidate} refs/heads/main\n", {"NOTEGATE_PUSHER": owner}, origin_path
    )
    hook_rules = {f.rule for f in hook.findings}
    recorded = lambda c: bool(rt.state.provenance(env.name, [c]))  # noqa: E731
    fetch = vet_fetch(origin, base, candidate, config.policy, recorded=recorded)
    _made, left_out, stop = syncer.plan_local(base, changes)
    sync_rules = {f.rule for f in left_out}
    if stop is not None:
        sync_rules |= {stop.rule, *(m for line in stop.lines for m in _RULE.findall(line))}

    if server is None or server == "credential-warning":
        assert hook.ok and fetch.ok, (server, hook_rules, fetch.rules())
        assert sync_rules == ({server} if server else set())
        return
    assert not hook.ok and not fetch.ok and sync_rules, (server, hook_rules, fetch.rules(), sync_rules)
    assert set(fetch.rules()) == hook_rules
    assert hook_rules <= sync_rules
    if "too-many-files" not in hook_rules:
        assert server in hook_rules, (server, hook_rules)
