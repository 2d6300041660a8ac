"""kill -9 while a group commit writes its one pack (vault/objects.py, issue 15): wherever the process dies,
before the origin's ref moves, nothing is acknowledged, both repositories stay fsck clean and on their old
tip, and the next process writes the same note as if nothing had happened."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pygit2
import pytest

from notegate.vault.store import ABSENT, MAIN_REF, Author, Change, VaultStore, git_fsck

AUTHOR = Author("Tester", "tester")

#: Where the child kills itself: the pack and its index in the clone, the pack's index not yet renamed into
#: place, the pack in the clone but not yet in the origin, and both packs placed with no ref moved.
KILL_AT = {
    "clone-pack-before-its-index": """
        real = os.replace
        def replace(src, dst, *a, **k):
            if str(dst).endswith(".idx"):
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst, *a, **k)
        os.replace = replace
    """,
    "clone-done-origin-not": """
        from notegate.vault import bulk
        def share(first, other, name, data):
            os.kill(os.getpid(), signal.SIGKILL)
        bulk._share = share
    """,
    "both-packs-no-ref": """
        def push(self, commit_id, parent):
            os.kill(os.getpid(), signal.SIGKILL)
        VaultStore._push = push
    """,
}

CHILD = """
import os, signal, sys
from pathlib import Path
from notegate.vault.store import ABSENT, Author, Change, VaultStore
{kill}
store = VaultStore(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
store.commit([Change("crash/n.md", b"never acknowledged\\n")], {{"crash/n.md": ABSENT}}, Author("T", "t"), "dies")
print("acknowledged")  # never reached
"""


def tip(repo_dir: Path) -> str:
    return str(pygit2.Repository(str(repo_dir)).references[MAIN_REF].target)


@pytest.mark.parametrize("where", sorted(KILL_AT))
def test_a_kill_while_the_group_pack_is_written_loses_and_breaks_nothing(
    seeded_store: VaultStore, origin: Path, where: str
) -> None:
    store = seeded_store
    clone_tip, origin_tip = tip(store.repo_dir), tip(origin)
    child = CHILD.format(kill=textwrap.dedent(KILL_AT[where]))
    done = subprocess.run(
        [sys.executable, "-c", child, store.name, str(store.repo_dir), str(origin)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "acknowledged" not in done.stdout
    assert (tip(store.repo_dir), tip(origin)) == (clone_tip, origin_tip)  # no ref moved: nothing acknowledged
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []
    reopened = VaultStore(store.name, store.repo_dir, str(origin))
    assert reopened.blob_id("crash/n.md") == ABSENT
    result = reopened.commit([Change("crash/n.md", b"written again\n")], {"crash/n.md": ABSENT}, AUTHOR, "again")
    assert tip(origin) == result.commit and reopened.read("crash/n.md")[0] == b"written again\n"
    reopened.roll_up()  # a half-written pack left behind is no obstacle to the periodic repack either
    assert git_fsck(store.repo_dir, 60) == [] and git_fsck(origin, 60) == []
    assert reopened.read("crash/n.md")[0] == b"written again\n"
