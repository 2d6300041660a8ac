"""The server, the pre-receive hook, the server's fetch and `notegate sync` judge the same change alike.

One base is committed through the server; hypothesis then proposes changes against it and asks every door
about the same change, committing nothing:

* **the server** -- the recipe's planner, in process (``NotesService.plan_commit``, a trusted caller, with
  the credential scan the note tools ask for);
* **the hook** -- a real ``git push`` by the owner into the real bare origin, through the pre-receive hook
  ``notegate init`` installs (the origin's main is set back after a push it accepted);
* **the fetch** -- the server's fetch vet of the same commit from the server's main (``vet_fetch``, with the
  server's record of its own commits, so it counts the range as the hook does);
* **sync** -- ``Syncer.plan_local`` on a workstation clone: what ``notegate sync`` would commit of it.

All four run one planner (:mod:`notegate.policy.plan`: :func:`plan` for the server, its ``Tally`` fed
from git for the other three), so they must accept and refuse the same changes, for the same rule.

:func:`test_every_door_gives_the_same_verdict` generates only what all four doors can express: plain files
(notes and attachments) added, edited, emptied, deleted and renamed (some renamed and edited), at private,
session-loaded and hidden paths, at instruction-file names, refused types and paths not in NFC, with
floor-held text, invisible characters, credentials, NUL bytes, bad UTF-8, notes over the size limit, and
more deletions or new files than one change may hold.  Two differences are by design: credentials are judged
by the doors a person types into (the server's note tools and sync: ``credential-warning`` for the owner),
while a push or a fetch carries what a person committed with git by hand, so they never refuse one; and how
much is reported -- the hook stops reading a change at ``too-many-files``, and the server names only its
first refusal (so it names the same rule as the hook whenever the hook found one rule), while sync leaves
a refused file out and judges what it would commit of the rest again (a rename whose new name is refused is
then a deletion: ``too-many-deletions`` may follow; the rest may hold a credential).

:func:`test_the_git_doors_agree_on_file_modes` covers what only the git doors can express, file modes
(executable, symbolic link, submodule): the server's recipe has no modes and sync commits every file it
sends as a plain file (it never sends a symlink), so the three doors there are the hook (a real push), the
server's fetch vet, and sync's vet of the same commit arriving from the origin (``vet_fetch`` without the
server's record, as ``notegate sync`` fetches: counted per commit).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

import pygit2
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from notegate.config import Config, load_config
from notegate.errors import NotegateError
from notegate.policy.plan import Intent
from notegate.services.notes import NotesService
from notegate.services.runtime import Environment, Runtime
from notegate.sync.daemon import Syncer
from notegate.sync.fetchvet import vet_fetch
from notegate.sync.hookfile import install_hook
from notegate.vault.store import Change
from support import set_policy
from support.callers import make_caller, vault_template
from support.gitstreams import CLEAN_ENV, EXEC, FILE, GITLINK, LINK, Origin, commit, rules_of, scratch_of

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
MODES = (FILE, EXEC, LINK, GITLINK)

notes_changes = st.dictionaries(
    st.sampled_from(sorted({*BASE, *NEW_NOTES} - set(MEDIA))), st.sampled_from(TEXTS) | st.none(), max_size=8
)
deletions = st.sets(st.sampled_from(sorted(BASE)), max_size=5)
media_changes = st.dictionaries(st.sampled_from(MEDIA), st.sampled_from(BLOBS) | st.none(), max_size=2)
_RULE = re.compile(r"Refused \[([a-z0-9-]+)\]")


@dataclass
class Doors:
    config: Config
    rt: Runtime
    env: Environment
    notes: NotesService
    door: Origin
    syncer: Syncer
    base: str


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory):
    """One vault for the whole module (a copy of this worker's `notegate init`), its origin's hook installed
    for the copy, the base committed through the server, then the limits lowered so a handful of files
    reaches them; a scratch repository to push from and a workstation clone for sync."""
    root = tmp_path_factory.mktemp("four-doors")
    shutil.copytree(vault_template(tmp_path_factory), root / "vault", symlinks=True)
    vault = root / "vault" / "notegate.toml"
    config = load_config(vault)
    for name, environment in config.environments.items():
        clone = config.state_dir / "envs" / name / "vault.git"
        pygit2.Repository(str(clone)).remotes.set_url("origin", environment.origin_url)
    origin = vault.parent / "origin.git"
    install_hook(origin, vault, config.default_environment)
    first = Runtime(config)
    try:
        base = [Change(p, d) for p, d in BASE.items()]
        NotesService(first).commit_as(OWNER, first.environment(None), base, dict.fromkeys(BASE, "absent"), "base")
    finally:
        first.close()
    set_policy(vault, max_deletions_per_commit=2, max_files_per_commit=3, max_note_bytes=4096)
    config = load_config(vault)
    assert (config.policy.max_deletions_per_commit, config.policy.max_note_bytes) == (2, 4096)
    rt = Runtime(config)
    door = Origin(config=vault, origin=origin, scratch=scratch_of(origin, root / "scratch.git"))
    ws = root / "laptop"
    subprocess.run(["git", "clone", "-q", str(origin), str(ws)], check=True, timeout=60, env=CLEAN_ENV)
    syncer = Syncer(ws, config.policy, owner=OWNER.login, device="laptop", git_env=CLEAN_ENV)
    try:
        yield Doors(config, rt, rt.environment(None), NotesService(rt), door, syncer, door.main)
    finally:
        rt.close()


def _push(doors: Doors, candidate: str) -> set[str] | None:
    """A real ``git push`` of ``candidate`` as the owner: None when the hook accepts it (the origin's main
    is then set back to the base, hook-free, for the next example), else the rules it printed."""
    owner = doors.config.environments[doors.env.name].owner
    result = doors.door.push(candidate, pusher={"NOTEGATE_PUSHER": owner})
    if result.returncode == 0:
        pygit2.Repository(str(doors.door.origin)).references["refs/heads/main"].set_target(doors.base)
        return None
    return rules_of(result)


def _server(doors: Doors, changes: dict[str, bytes | None]) -> str | None:
    try:
        doors.notes.plan_commit(
            OWNER, doors.env, [Change(p, d) for p, d in changes.items()], Intent(scan_credentials=True)
        )
    except NotegateError as exc:
        return exc.rule
    return None


def _fetch(doors: Doors, candidate: str, *, recorded: bool = True) -> set[str] | None:
    """The fetch vet from the base to ``candidate``: with the server's record of its own commits (the
    server's fetch), or without it (``notegate sync``'s fetch).  None: accepted."""
    rt, env = doors.rt, doors.env
    has = (lambda c: bool(rt.state.provenance(env.name, [c]))) if recorded else None
    verdict = vet_fetch(doors.door.scratch, doors.base, candidate, doors.config.policy, recorded=has)
    return None if verdict.ok else set(verdict.rules())


def _sync(doors: Doors, changes: dict[str, bytes | None]) -> set[str]:
    _made, left_out, stop = doors.syncer.plan_local(doors.base, changes)
    rules = {f.rule for f in left_out}
    if stop is not None:
        rules |= {stop.rule, *(m for line in stop.lines for m in _RULE.findall(line))}
    return rules


@settings(max_examples=15, deadline=None)
@example(deleted=set(), changed=dict.fromkeys(NEW_NOTES[:4], TEXTS[0]), media={})  # too-many-files
@example(deleted={"notes/a.md", "notes/b.md", "notes/c.md"}, changed={"moved/a.md": TEXTS[1]}, media={})  # -M
@example(deleted={"notes/b.md", "media/pic.png"}, changed={"notes/a.md": b" \n", "notes/c.md": b""}, media={})
@example(deleted=set(), changed={"notes/new1.md": SECRET}, media={})  # a credential: a warning where typed
@example(  # renamed-and-edited to a refused name: sync, leaving it out, deletes one file too many
    deleted={"notes/a.md", "handoffs/demo.md", "inbox/handoffs/demo.md"}, changed={".obsidian/x.md": TEXTS[1]}, media={}
)
@given(deleted=deletions, changed=notes_changes, media=media_changes)
def test_every_door_gives_the_same_verdict(doors: Doors, deleted: set, changed: dict, media: dict) -> None:
    proposed = {**dict.fromkeys(deleted), **changed, **media}
    changes = {p: d for p, d in proposed.items() if d is not None or p in BASE}
    if not changes:
        return
    candidate = commit(
        doors.door.scratch,
        [doors.base],
        add={p: (FILE, d) for p, d in changes.items() if d is not None},
        delete=tuple(p for p, d in changes.items() if d is None),
    )
    server = _server(doors, changes)
    hook = _push(doors, candidate)
    fetch = _fetch(doors, candidate)
    sync = _sync(doors, changes)

    if server is None or server == "credential-warning":
        assert hook is None and fetch is None, (server, hook, fetch)
        assert sync == ({server} if server else set()), (server, sync)
        return
    assert hook is not None and fetch is not None and sync, (server, hook, fetch, sync)
    assert fetch == hook, (hook, fetch)
    assert hook <= sync, (hook, sync)
    if "too-many-files" not in hook:  # the hook read the whole change: the server's first refusal is among its
        assert server in hook, (server, hook)
        if len(hook) == 1:
            assert hook == {server}, (server, hook)
            # sync leaves a refused file out and judges the rest again: a rename whose new name is refused
            # is then a deletion, and what is left may hold a credential
            assert sync - hook <= {"too-many-deletions", "credential-warning"}, (server, hook, sync)


file_modes = st.dictionaries(
    st.sampled_from(("notes/a.md", "notes/new1.md", "media/pic.png", "handoffs/demo.md")),
    st.sampled_from(MODES),
    min_size=1,
    max_size=3,
)


@settings(max_examples=8, deadline=None)
@example(modes={"notes/a.md": EXEC}, texts=list(TEXTS[:3]))
@example(modes={"notes/new1.md": LINK, "media/pic.png": GITLINK}, texts=list(TEXTS[:3]))
@given(modes=file_modes, texts=st.lists(st.sampled_from(TEXTS[:3]), min_size=3, max_size=3))
def test_the_git_doors_agree_on_file_modes(doors: Doors, modes: dict, texts: list) -> None:
    add = {}
    for (path, mode), text in zip(sorted(modes.items()), texts, strict=False):
        if mode == GITLINK:
            add[path] = (mode, pygit2.Oid(hex=doors.base))  # a submodule pointing at a commit
        elif mode == LINK:
            add[path] = (mode, b"../../etc/passwd")
        else:
            add[path] = (mode, PNG if path.endswith(".png") else text)
    candidate = commit(doors.door.scratch, [doors.base], add=add)
    hook = _push(doors, candidate)
    fetch = _fetch(doors, candidate)
    sync = _fetch(doors, candidate, recorded=False)
    assert hook == fetch == sync, (hook, fetch, sync)
    plain = all(mode == FILE for mode in modes.values())
    assert (hook is None) == plain, (modes, hook)
