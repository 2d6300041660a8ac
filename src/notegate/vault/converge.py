"""When the origin lost commits the server acknowledged: re-apply them on its tip, or stop and say which.

Theory of operation
-------------------
* **When.**  The server's fetch finds that its main is not in the origin's history: someone reset or
  force-pushed the origin's main (a repair of a refused tip, a rewind, a rewrite).  The commits on main that
  the origin no longer has are exactly those reachable from main and not from the origin's tip; every one of
  them was acknowledged to a writer (the server's own writes) or served as the truth (fetched ones).
* **Never dropped, never merged.**  Once the vet accepts the origin's own new commits (the range from the
  last commit both share to the origin's tip), the server re-applies the lost commits' changes on that tip,
  one new commit per lost commit, through the store's one commit path, and pushes them as a compare-and-swap
  from the tip it judged.  A lost change is re-applied only where the origin left that path as it was at the
  shared commit; where the origin already has exactly the lost change there is nothing to do.  Where the
  origin changed the same path differently (or a new note would differ only by letter case from one the
  origin added), nothing is decided on anyone's behalf: the server stays where it is, writes are refused
  ``[origin-refused]``, and the owner gets a task naming the lost commits (:class:`Stuck`).
* **Bounded.**  At most :data:`MAX_REPLAYED` lost commits are re-applied; more, or no shared commit at all (an
  unrelated history), is a task for the owner too.
* This module decides (reads trees, returns a plan or a :class:`Stuck`); :meth:`VaultStore._converge` builds,
  pushes and moves main.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pygit2

ABSENT = "absent"  # what the store's tree reads answer for no file (notegate.vault.store.ABSENT)
#: Lost commits the server re-applies by itself; past it the owner decides (a task).
MAX_REPLAYED = 200
#: Lost commits and paths named in a task note and a log line (the rest are counted).
SHOWN = 10
#: The rule a stuck convergence reports (the origin's history no longer holds the server's commits).
RULE = "push-non-fast-forward"


@dataclass(frozen=True)
class Replayed:
    """One lost commit to make again on the origin's tip: its author, message and changes (path -> blob id,
    or None to delete)."""

    source: str
    author_name: str
    author_email: str
    message: str
    changes: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Stuck:
    """The lost commits cannot be re-applied by the server alone (a :class:`~notegate.vault.store.Verdict`)."""

    good: str  # the server's main
    base: str | None  # the last commit main and the origin's tip share
    tip: str  # the origin's tip
    lost: tuple[str, ...]  # the commits the origin lost, oldest first (at most SHOWN kept)
    lost_count: int
    why: str  # what stops the replay (paths, counts: never contents)

    @property
    def ok(self) -> bool:
        return False

    def rules(self) -> list[str]:
        return [RULE]

    def summary(self) -> str:
        """One log line: counts, short ids and escaped paths, never contents."""
        return (
            f"the origin's tip {self.tip[:12]} lost {self.lost_count} commit(s) the server acknowledged "
            f"({', '.join(c[:12] for c in self.lost)}{', ...' if self.lost_count > len(self.lost) else ''}); "
            f"not re-applied: {self.why}"
        )

    def task_text(self, environment: str) -> str:
        """The task note for the environment's owner: what was lost and how to give it back."""
        return "\n".join(
            [
                f"The origin of environment '{environment}' moved to commit {self.tip[:12]}, whose history no longer "
                f"holds {self.lost_count} commit(s) the server acknowledged, and the server cannot re-apply them by "
                f"itself: {self.why}.",
                f"The server stays on commit {self.good[:12]}: reads and search keep working on it; writes are "
                "refused [origin-refused] until the origin holds these commits again.",
                "Lost commits (oldest first):",
                *(f"- {c[:12]}" for c in self.lost),
                *([f"- and {self.lost_count - len(self.lost)} more"] if self.lost_count > len(self.lost) else []),
                f"Repair: merge commit {self.good[:12]} (from the server's own clone of the environment, or any "
                "clone that has it) into the origin's main and push; or push it back as the origin's main. The "
                "server moves on at its next fetch and marks this task resolved.",
            ]
        )


def plan(
    repo: pygit2.Repository,
    head: str,
    base: str | None,
    tip: str,
    changed: Callable[[pygit2.Tree | None, pygit2.Tree], list[tuple[str, str]]],
    blob_at: Callable[[pygit2.Tree | None, str], str],
    collision: Callable[[str], str | None],
) -> list[Replayed] | Stuck:
    """The lost commits of ``head`` (not reachable from ``tip``) as changes to re-apply on ``tip``, or why not.

    ``changed(old_tree, new_tree)``: (path, blob or absent) of the paths that differ; ``blob_at(tree, path)``;
    ``collision(path)``: the note at the tip that ``path`` would differ from only by letter case, if any."""
    walker = repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(tip)
    lost = [commit for _i, commit in zip(range(MAX_REPLAYED + 1), walker, strict=False)]
    count = len(lost) if len(lost) <= MAX_REPLAYED else sum(1 for _ in _walk(repo, head, tip))

    def stuck(why: str) -> Stuck:
        return Stuck(head, base, tip, tuple(str(c.id) for c in lost[:SHOWN]), count, why)

    if base is None:
        return stuck("the origin's history shares no commit with the server's")
    if count > MAX_REPLAYED:
        return stuck(f"more than {MAX_REPLAYED} commits")
    base_tree = repo[base].peel(pygit2.Tree)
    head_tree = repo[head].peel(pygit2.Tree)
    tip_tree = repo[tip].peel(pygit2.Tree)
    wanted: set[str] = set()  # paths whose lost change the tip does not have yet
    both: list[str] = []  # paths the origin changed too, differently
    net: dict[str, str] = {}
    for path, ours in changed(base_tree, head_tree):
        theirs, before = blob_at(tip_tree, path), blob_at(base_tree, path)
        if theirs == ours:
            continue
        if theirs != before or (before == ABSENT and collision(path) is not None):
            both.append(path)
        else:
            wanted.add(path)
            net[path] = ours
    if both:
        return stuck(f"the origin changed the same path(s) too: {', '.join(sorted(both)[:SHOWN])}")
    if any(len(commit.parents) > 1 for commit in lost):  # a merge's own changes are not one parent's diff: net
        last = lost[-1]
        changes = tuple((path, None if blob == ABSENT else blob) for path, blob in sorted(net.items()))
        message = f"Re-apply {count} commit(s) the origin lost (up to {str(last.id)[:12]})\n"
        return [Replayed(str(last.id), last.author.name, last.author.email, message, changes)] if changes else []
    replays: list[Replayed] = []
    for commit in lost:
        parent = commit.parents[0].tree if commit.parents else None
        changes = tuple(
            (path, None if blob == ABSENT else blob) for path, blob in changed(parent, commit.tree) if path in wanted
        )
        if changes:
            replays.append(Replayed(str(commit.id), commit.author.name, commit.author.email, commit.message, changes))
    return replays


def _walk(repo: pygit2.Repository, head: str, tip: str):
    walker = repo.walk(head, pygit2.enums.SortMode.NONE)
    walker.hide(tip)
    return walker
