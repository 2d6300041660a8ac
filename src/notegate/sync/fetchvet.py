"""The server's fetch: what the origin brings is inspected before the server's main moves to it.

The store fetches the origin's tip into its tracking ref and asks :func:`vet_fetch` about the range from
its main (the last good commit) to that tip; only an empty answer moves main.  Raw git is allowed here, as
in :mod:`notegate.sync.incoming`: this module reads trees with pygit2 and asks :mod:`notegate.policy`.

Theory of operation
-------------------
* **Always from the last good commit.**  After a refusal the server stays where it was, so the next fetch
  inspects the whole range again -- the refused commits and whatever came on top of them.  Nothing is ever
  merged, and nothing refused is ever dropped silently: the range stays refused until the origin's tip
  no longer holds any of it.
* **Per-commit rules, judged against the tip.**  Every commit of the range is checked with the git door's
  rules (:func:`notegate.sync.incoming.inspect_update`).  A finding still counts when the tip still holds
  it (:func:`notegate.policy.decide_fetched_finding`): a path finding while the tip's entry at that path is
  the commit's own (same mode, same object); a commit-level count (too many deletions or files) unless the
  tip has, at every path the commit changed, what the last good commit had -- the commit's net effect on
  what the server serves is nil (a ``git revert`` of it; and the revert of a mass addition, itself a mass
  deletion, deletes nothing the server ever had).
  So a revert on top repairs a range, and so does a force-push back to the last good commit (or to clean
  commits on top of it).  A rewritten history (the tip does not descend from the last good commit) and an
  unreadable object are never repaired by a later commit.
* **Why judging against the tip is enough.**  Every entry of the tip's tree that differs from the last
  good commit's was written by some commit of the range -- the last one to set it -- and that commit's own
  check saw exactly that entry; if it was refused, the finding's entry is the tip's entry and it still
  counts.  What a reverted commit carried is left only in history, which the server never serves as a
  note (reads, listings and search work on the tip; a restore is a new write through the one recipe, which
  applies the same rules to the exact bytes).
* **A capped inspection is never accepted**: past :data:`notegate.sync.incoming.MAX_FINDINGS` findings
  the range was not seen whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from notegate.policy import Decision, Policy, decide_fetch, decide_fetched_finding
from notegate.sync.incoming import Finding, Inspection, Recorded, inspect_update, shown_path

__all__ = ["FetchVerdict", "task_text", "vet_fetch"]

#: Findings named in a task note and a log line (the rest are counted).
SHOWN_FINDINGS = 10


@dataclass(frozen=True)
class FetchVerdict:
    good: str | None  # the last good commit (the server's main)
    tip: str  # the origin's tip
    inspection: Inspection
    counted: tuple[Finding, ...]  # findings that still hold at the tip
    decision: Decision

    @property
    def ok(self) -> bool:
        return self.decision.allowed

    def rules(self) -> list[str]:
        return sorted({f.rule for f in self.counted})


Entry = tuple[int, bytes]


def _commit(repo: pygit2.Repository, commit_id: str) -> pygit2.Commit | None:
    try:
        obj = repo[pygit2.Oid(hex=commit_id)]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Commit) else None


def _entry(tree: pygit2.Tree | None, path: str) -> Entry | None:
    """(mode, raw id) of the entry at ``path`` (names compared as the bytes git stores), else None."""
    if tree is None:
        return None
    raw = path.encode("utf-8", "surrogateescape")
    try:
        plain = raw.decode("utf-8")
    except UnicodeDecodeError:
        plain = None
    if plain is not None:
        try:
            obj = tree[plain]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return obj.filemode, obj.id.raw
    node: pygit2.Object | None = tree
    found: Entry | None = None
    for part in raw.split(b"/"):  # a name git holds as bytes that are not UTF-8: compare them one by one
        if not isinstance(node, pygit2.Tree):
            return None
        match = next((child for child in node if child.raw_name == part), None)
        if match is None:
            return None
        found = (match.filemode, match.id.raw)
        node = match if isinstance(match, pygit2.Tree) else None
    return found


class _Tip:
    """The tip's tree, read lazily and once."""

    def __init__(self, repo: pygit2.Repository, tip: str) -> None:
        commit = _commit(repo, tip)
        self.repo = repo
        self.tree = commit.tree if commit is not None else None

    def holds_entry(self, repo: pygit2.Repository, commit_id: str, path: str) -> bool:
        """Does the tip hold, at ``path``, exactly what ``commit_id`` put there?  (Unknown counts as yes.)"""
        commit = _commit(repo, commit_id)
        if commit is None or self.tree is None:
            return True
        theirs = _entry(commit.tree, path)
        return theirs is None or _entry(self.tree, path) == theirs

    def undone(self, repo: pygit2.Repository, commit_id: str, good: pygit2.Tree | None) -> bool:
        """Is every path the commit changed (against its first parent) at the tip what it was at the last good
        commit (``good``'s tree; None: nothing)?  Then the commit's net effect on what the server serves is
        nil: it was reverted, or its own changes were (a mass addition undone by a mass deletion)."""
        commit = _commit(repo, commit_id)
        if commit is None or self.tree is None:
            return False
        try:
            parent = commit.parents[0].tree if commit.parents else None
            diff = parent.diff_to_tree(commit.tree) if parent is not None else commit.tree.diff_to_tree(swap=True)
            for delta in diff.deltas:
                for raw in {delta.old_file.raw_path, delta.new_file.raw_path}:
                    path = raw.decode("utf-8", "surrogateescape")
                    if _entry(self.tree, path) != _entry(good, path):
                        return False
        except (KeyError, ValueError, pygit2.GitError):
            return False
        return True


def vet_fetch(
    repo: pygit2.Repository, good: str | None, tip: str, policy: Policy, *, recorded: Recorded | None = None
) -> FetchVerdict:
    """Judge the range from ``good`` (the server's main; None for a first clone) to the origin's ``tip``.

    ``recorded(commit_id)``: did a replica of this server make the commit (state ``commit_provenance``)?  A
    commit of the range speaking in the server's voice without a record is refused
    ``[push-forged-provenance]``.  Not on a first clone: the origin's history is then the vault as the
    operator gave it, and commits made before provenance was recorded (or recorded in another state
    database) carry the server's trailers without a row.  They are still never believed: whatever has no
    row is shown as pushed, unverified, without a tier."""
    # Counts over the range, as the hook counts a push: from the newest commit a replica of this server made
    # (it built on a tip it had vetted) or the last good commit, to the tip: the foreign pushes since then,
    # judged together, so a mass deletion split over several pushes is one count. Without the server's record
    # (a first clone, `notegate sync` on a workstation), per commit.
    if good is not None and recorded is not None:
        inspection = inspect_update(repo, good, tip, policy, recorded=recorded, range_from_recorded=True)
    else:
        inspection = inspect_update(repo, good, tip, policy, counts_per_commit=True)
    at_tip = _Tip(repo, tip)
    good_commit = _commit(repo, good) if good else None
    good_tree = good_commit.tree if good_commit is not None else None
    counted: list[Finding] = []
    nil: dict[str, bool] = {}
    for finding in inspection.findings:
        if finding.over_range:  # judged on the tip against the last good commit: it holds at the tip
            undone = False
        elif finding.path:
            undone = not at_tip.holds_entry(repo, finding.commit, finding.path)
        else:
            if finding.commit not in nil:
                nil[finding.commit] = at_tip.undone(repo, finding.commit, good_tree)
            undone = nil[finding.commit]
        if not decide_fetched_finding(finding.rule, undone_at_tip=undone).allowed:
            counted.append(finding)
    decision = decide_fetch(len(counted), truncated=inspection.truncated)
    return FetchVerdict(good, tip, inspection, tuple(counted), decision)


def summary(verdict: FetchVerdict) -> str:
    """One log line: counts, short ids, rule names and escaped paths -- never a note's contents."""
    shown = "; ".join(
        f"{f.commit[:12]} {shown_path(f.path, 120) if f.path else '(the commit)'} [{f.rule}]"
        for f in verdict.counted[:SHOWN_FINDINGS]
    )
    more = len(verdict.counted) - SHOWN_FINDINGS
    return (
        f"refused the origin's tip {verdict.tip[:12]} (staying on {(verdict.good or 'nothing')[:12]}): "
        f"{len(verdict.counted)} finding(s), rules {', '.join(verdict.rules()) or verdict.decision.rule}"
        + (f"; {shown}" if shown else "")
        + (f"; and {more} more" if more > 0 else "")
        + ("; the inspection stopped at its cap" if verdict.inspection.truncated else "")
    )


def task_text(environment: str, verdict: FetchVerdict, head: str | None = None) -> str:
    """The task note for the environment's owner: what was refused and the two ways to repair it.  ``head``:
    the server's main when the origin's history no longer holds it (the range was judged from the last commit
    both share, ``verdict.good``); the server re-applies its own lost commits once the origin is repaired."""
    good = verdict.good[:12] if verdict.good else None
    stays = (head or verdict.good or "")[:12] or None
    lines = [
        f"The origin of environment '{environment}' moved to commit {verdict.tip[:12]}, which the server "
        f"refused: {len(verdict.counted)} finding(s) under rule(s) {', '.join(verdict.rules()) or 'origin-refused'}"
        + (" (the inspection stopped at its cap of findings)" if verdict.inspection.truncated else "")
        + ".",
        f"The server stays on {'commit ' + stays if stays else 'an empty vault (nothing was accepted yet)'}: reads "
        "and search keep working on it; writes are refused [origin-refused] until the origin is repaired.",
        "Findings:",
        *(f"- {f.line()}" for f in verdict.counted[:SHOWN_FINDINGS]),
    ]
    if len(verdict.counted) > SHOWN_FINDINGS:
        lines.append(f"- and {len(verdict.counted) - SHOWN_FINDINGS} more")
    lines.append(
        "Repair: revert the refused commits on top (git revert), or force-push the origin back to "
        + (f"{good} (or to clean commits on top of it)" if good else "a clean history")
        + ". The server moves on at its next fetch and marks this task resolved"
        + (
            f"; it re-applies its own commits since {good} that the origin no longer holds (up to {stays})."
            if stays and stays != good
            else "."
        )
    )
    return "\n".join(lines)
