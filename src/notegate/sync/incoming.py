"""Incoming commits: every commit notegate did not make, checked against the policy before it is accepted.

Wherever commits arrive from outside -- the pre-receive hook (:mod:`notegate.sync.prereceive`), and in a
later round the server's fetch and ``notegate sync`` -- :func:`inspect_update` is asked about one branch
update (old tip or None, new tip) and answers with findings: (commit, path, rule, what).  Raw git is
allowed here, as in the vault store: this module reads objects with pygit2 and hands each fact it reads (a
name, a mode, a size, the exact bytes, a blob id at the base) to the commit planner, the one the server's
recipe asks (:class:`notegate.policy.tally.Tally`: every file's decision, every count and its verdict); it
decides nothing about a change itself.  What it still asks :mod:`notegate.policy` directly is about the
update, not the change: the pusher, the commit's provenance, fast-forward, case twins, time and commit count.

Theory of operation
-------------------
* **Every new commit**: all commits reachable from the new tip and from none of ``hide`` (the old tip and
  the origin's other branches: history already accepted), oldest first.  At most ``max_commits`` of them
  (the hook passes ``max_commits_per_push``): past it the update is refused ``[too-many-commits]`` before
  any is inspected, and past ``deadline`` (``push_inspection_seconds``) it is refused ``[incoming-too-slow]``
  -- never accepted half-seen.
* **Content: one diff per commit, against its first parent** (a root commit against the empty tree), read
  from the raw tree objects: subtrees with the same id are skipped, so a commit costs what it changes.
  Modes are read as written (libgit2 would normalise ``100664`` to ``100644``), names as bytes.  Every file
  content a commit introduces is checked, so nothing is smuggled in and taken out again unseen.
* **Counts: one diff over the whole range.**  Deletions and added files are counted between the range's
  base -- the last accepted commit on the new tip's first-parent line (the old tip for a fast-forward) --
  and the new tip, once: splitting a change across the commits of one push or fetch never changes the
  answer.  A note whose new content is empty or whitespace only (and was not before) counts as a deletion:
  to every reader it is gone.  Counted per commit instead: a range with no accepted commit at all (a first
  push into an empty origin, a first clone), and a fetch (``counts_per_commit``): a fetch's range is every
  push since the last good commit -- an import's batches, a weekend of inbox promotions on a laptop that
  was off -- each accepted on its own, and a sum over them would refuse the origin for good.  A single
  commit adding more than ``max_files_per_commit`` files is refused on its own too (the inspection stops
  there).
* **Case and Unicode twins**: in every folder the range changes, a new name whose collision key
  (:func:`notegate.vault.paths.caseless_key`, the store's) equals another name's there is refused
  ``[path-case-collision]``: the two would be one file on a case-insensitive clone.
* **Merges**: the diff against the first parent holds everything the merge brings into the first-parent
  line, so every file content in the merge's tree that differs from the mainline is checked; that is what
  keeps a merge from smuggling anything in.  Counts and the pusher guard look only at what the merge (or
  the range) itself introduces -- entries that differ from *every* parent (every accepted commit the range
  grows from) -- because what it takes from another parent was judged on that parent's own push.
* **Read no more than needed**: a refused folder (hidden, or a path the rules refuse) is reported once and
  not entered; a blob's type and size come from the object header, and its content is read only when the
  size is allowed (notes: UTF-8, no NUL, the floor where sessions load it; attachments: the first bytes);
  at :data:`MAX_FINDINGS` findings everything stops.  Deep trees stop at the path length limit.
* **Never raise on hostile input**: an unreadable, missing or malformed object is a finding
  ``[incoming-malformed]``; only a bug raises.

Renames are not deletions: a deleted blob whose id is added elsewhere in the range is a rename; when more
than ``max_deletions_per_commit`` remain, libgit2's similarity detection (git's ``-M``, ``rename_limit``
:data:`RENAME_LIMIT`) pairs the rest.
"""

from __future__ import annotations

import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, ObjectType, SortMode

from notegate.errors import NotegateError, remedy_for
from notegate.policy import (
    MODE_GITLINK,
    MODE_TREE,
    RENAME_LIMIT,
    Decision,
    Policy,
    decide_case_twin,
    decide_commit_count,
    decide_commit_provenance,
    decide_fast_forward,
    decide_inspection_time,
    is_blank,
)
from notegate.policy.tally import Tally
from notegate.vault.paths import MAX_PATH_BYTES, caseless_key

__all__ = ["MAX_FINDINGS", "Finding", "Inspection", "explain_all", "inspect_update", "open_repository", "shown_path"]

#: Findings reported at most per inspection; past it the inspection stops (``Inspection.truncated``).
MAX_FINDINGS = 100
#: Parsed trees kept while one update is inspected (a commit's trees are the next commit's parent trees).
TREE_CACHE = 4096
_OID_BYTES = 20

Guard = Callable[[str], Decision]
"""Who may change a path (the pre-receive hook's pusher check); None where nobody is asked (fetch, sync)."""
Recorded = Callable[[str], bool]
"""Did the server record this commit id as its own (state ``commit_provenance``)? Given by the hook and the
server's fetch, which then refuse a commit speaking in the server's voice that it did not record; None
where nobody is asked (``notegate sync``, whose origin holds the server's commits)."""


@dataclass(frozen=True)
class Finding:
    """One refused thing: the commit that carries it, the path (``""`` for the commit or the update as a
    whole), the rule and what was found -- never a note's contents."""

    commit: str
    path: str
    rule: str
    what: str
    #: A finding about the whole range (a count over it, a twin at its tip): it holds at the tip by
    #: construction, so no later commit of the range "repairs" it (sync/fetchvet).
    over_range: bool = False

    def line(self) -> str:
        """The line a pusher reads (git prints it as ``remote: …``); the remedy is printed once per rule
        (:func:`explain_all`)."""
        where = shown_path(self.path) if self.path else "(the commit)"
        return f"{self.commit[:12]} {where}: Refused [{self.rule}]: {self.what}"


@dataclass(frozen=True)
class Inspection:
    findings: tuple[Finding, ...]
    commits: int  # how many new commits were inspected
    truncated: bool  # stopped at MAX_FINDINGS

    @property
    def ok(self) -> bool:
        return not self.findings

    def rules(self) -> list[str]:
        return sorted({f.rule for f in self.findings})


class _Malformed(NotegateError):
    """An object that cannot be read as the commit or tree it should be (internal: becomes a finding)."""

    rule = "incoming-malformed"


def shown_path(path: str, limit: int = 200) -> str:
    """A path as a terminal may print it: invisible, control and undecodable characters escaped, bounded."""
    out = []
    for ch in path[:limit]:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out) + ("…" if len(path) > limit else "")


def open_repository(git_dir: str | Path, object_dirs: Iterable[str | Path] = ()) -> pygit2.Repository:
    """The repository at ``git_dir`` with extra object directories visible: inside a pre-receive hook the
    pushed objects sit in git's quarantine (``GIT_OBJECT_DIRECTORY``) until the hook accepts them."""
    repo = pygit2.Repository(str(git_dir))
    for directory in object_dirs:
        if Path(directory).is_dir():
            repo.odb.add_disk_alternate(str(directory))
    return repo


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: int
    oid: bytes  # the raw 20 bytes

    @property
    def is_tree(self) -> bool:
        return self.mode == MODE_TREE


def _parse_tree(data: bytes) -> dict[bytes, _Entry]:
    """A raw tree object's entries (``<octal mode> <name>\\0<20-byte id>`` repeated), strictly."""
    entries: dict[bytes, _Entry] = {}
    i, size = 0, len(data)
    while i < size:
        space = data.find(b" ", i, i + 8)
        nul = data.find(b"\0", space + 1) if space > 0 else -1
        if space <= i or nul < 0 or nul + 1 + _OID_BYTES > size:
            raise _Malformed("a tree object is truncated or malformed")
        mode_text = data[i:space]
        if not mode_text.isdigit() or any(c > ord("7") for c in mode_text):
            raise _Malformed("a tree entry has a mode that is not octal")
        name = data[space + 1 : nul]
        if not name or b"/" in name or name in (b".", b".."):
            raise _Malformed("a tree entry has an empty name, a '/' in its name, or is '.' or '..'")
        if name in entries:
            raise _Malformed("a tree names the same entry twice")
        entries[name] = _Entry(int(mode_text, 8), data[nul + 1 : nul + 1 + _OID_BYTES])
        i = nul + 1 + _OID_BYTES
    return entries


class _Inspector:
    def __init__(
        self,
        repo: pygit2.Repository,
        policy: Policy,
        guard: Guard | None,
        deadline: float | None,
        recorded: Recorded | None = None,
    ) -> None:
        self.repo, self.policy, self.guard, self.deadline, self.recorded = repo, policy, guard, deadline, recorded
        self.findings: list[Finding] = []
        self.truncated = False
        self.late = False
        self._trees: OrderedDict[bytes, dict[bytes, _Entry]] = OrderedDict()

    # ------------------------------------------------------------ findings
    @property
    def full(self) -> bool:
        """Stop everything: at the cap of findings, or past the deadline."""
        return self.truncated or self.late

    def add(self, commit: str, path: str, decision: Decision, *, over_range: bool = False) -> None:
        if decision.allowed or self.truncated:
            return
        self.findings.append(Finding(commit, path, decision.rule, decision.reason, over_range))
        if len(self.findings) >= MAX_FINDINGS:
            self.truncated = True

    def malformed(self, commit: str, path: str, what: str) -> None:
        if not self.truncated:
            self.add(commit, path, Decision(False, _Malformed.rule, what))

    def overdue(self, tip: str) -> bool:
        """Past the deadline?  Then the update is refused (reported once) and the inspection stops."""
        if self.deadline is not None and not self.late and time.monotonic() > self.deadline:
            self.add(tip, "", decide_inspection_time(self.policy, overdue=True), over_range=True)
            self.late = True
        return self.late

    # ------------------------------------------------------------ objects
    def tree(self, oid: bytes | None) -> dict[bytes, _Entry]:
        if oid is None:
            return {}
        cached = self._trees.get(oid)
        if cached is not None:
            self._trees.move_to_end(oid)
            return cached
        try:
            kind, data = self.repo.odb.read(pygit2.Oid(raw=oid))
        except (KeyError, ValueError, pygit2.GitError):
            raise _Malformed("a tree object is missing") from None
        if kind != ObjectType.TREE:
            raise _Malformed("an entry marked as a folder is not a tree object")
        entries = _parse_tree(data)
        self._trees[oid] = entries
        if len(self._trees) > TREE_CACHE:
            self._trees.popitem(last=False)
        return entries

    def lookup(self, tree: bytes | None, path: bytes) -> _Entry | None:
        """The entry at ``path`` under ``tree`` (None when absent or unreadable)."""
        entry: _Entry | None = None
        for part in path.split(b"/"):
            if tree is None:
                return None
            try:
                entry = self.tree(tree).get(part)
            except _Malformed:
                return None
            if entry is None:
                return None
            tree = entry.oid if entry.is_tree else None
        return entry

    def header(self, oid: bytes) -> tuple[int, int]:
        try:
            kind, size = self.repo.odb.read_header(pygit2.Oid(raw=oid))
        except (KeyError, ValueError, pygit2.GitError):
            raise _Malformed("a file's object is missing") from None
        return int(kind), size

    def content(self, oid: bytes) -> bytes:
        try:
            return self.repo.odb.read(pygit2.Oid(raw=oid))[1]
        except (KeyError, ValueError, pygit2.GitError):
            raise _Malformed("a file's object is missing") from None

    def blank(self, oid: bytes) -> bool:
        """Is this blob a note with nothing in it -- empty, or whitespace (and byte-order marks) only?  A
        blob larger than a note may be is never read (and is not blank: it is refused on its own)."""
        try:
            kind, size = self.header(oid)
            if kind != ObjectType.BLOB or size > self.policy.max_note_bytes:
                return False
            data = self.content(oid) if size else b""
        except _Malformed:
            return False
        return is_blank(data)

    # ------------------------------------------------------------ one commit, and the range
    def commit(self, commit: pygit2.Commit, *, count: bool) -> None:
        cid = str(commit.id)
        if self.recorded is not None:  # who made it: only the server's record says (never the commit's words)
            emails = (
                commit.author.raw_email.decode("utf-8", "replace"),
                commit.committer.raw_email.decode("utf-8", "replace"),
            )
            message = commit.raw_message.decode("utf-8", "replace")
            decision = decide_commit_provenance(message, emails, recorded=False)
            if not decision.allowed and self.recorded(cid):  # the record is looked up only when it matters
                decision = decide_commit_provenance(message, emails, recorded=True)
            self.add(cid, "", decision)
        parents = [p.raw for p in commit.parent_ids]
        try:
            first_tree = self._tree_of(parents[0]) if parents else None
            other_trees = [self._tree_of(p) for p in parents[1:]]
            _CommitDiff(self, cid, first_tree, commit.tree_id.raw, other_trees, check=True, count=count).run()
        except _Malformed as exc:
            self.malformed(cid, "", exc.message)

    def range(self, tip: str, tip_tree: bytes, base: bytes | None, others: list[bytes], *, count: bool) -> None:
        """The whole range at once, from ``base`` (None: the empty tree) to the tip: counts and twins."""
        try:
            base_tree = self._tree_of(base) if base is not None else None
            other_trees = [self._tree_of(p) for p in others]
            _CommitDiff(self, tip, base_tree, tip_tree, other_trees, check=False, count=count).run()
        except _Malformed as exc:
            self.malformed(tip, "", exc.message)

    def _tree_of(self, commit_oid: bytes) -> bytes:
        try:
            parent = self.repo[pygit2.Oid(raw=commit_oid)]
        except (KeyError, ValueError, pygit2.GitError):
            raise _Malformed("a parent commit is missing") from None
        if not isinstance(parent, pygit2.Commit):
            raise _Malformed("a parent is not a commit")
        return parent.tree_id.raw


@dataclass(frozen=True, slots=True)
class _ObjectFacts:
    """A tree entry as :class:`notegate.policy.FileFacts`: its mode, then its header's size, then its bytes
    (a missing object, or one that is not a blob, raises :class:`_Malformed`)."""

    ins: _Inspector
    entry: _Entry

    @property
    def mode(self) -> int:
        return self.entry.mode

    def size(self) -> int:
        object_type, size = self.ins.header(self.entry.oid)
        if object_type != ObjectType.BLOB:
            raise _Malformed("a file entry does not point at a blob")
        return size

    def read(self) -> bytes:
        return self.ins.content(self.entry.oid)


class _CommitDiff:
    """One tree against another: one commit against its first parent (``check``: every changed file checked,
    the pusher guard asked), or the whole range from its base to the tip (not ``check``: twins looked for);
    with ``count``, deletions, emptied notes and additions counted and judged.  Every file, folder and count
    is handed to the planner's :class:`~notegate.policy.tally.Tally` as it is read."""

    def __init__(
        self,
        ins: _Inspector,
        cid: str,
        old_tree: bytes | None,
        new_tree: bytes,
        other_parents: list[bytes],
        *,
        check: bool,
        count: bool,
    ) -> None:
        self.ins, self.cid, self.policy = ins, cid, ins.policy
        self.old_tree, self.new_tree, self.others = old_tree, new_tree, other_parents
        self.check, self.count, self.over_range = check, count, not check
        self.tally = Tally(self.policy, over_range=self.over_range)
        self.stopped = False

    def add(self, path: str, decision: Decision) -> None:
        self.ins.add(self.cid, path, decision, over_range=self.over_range)

    def introduced(self, raw_path: bytes, entry: _Entry | None) -> bool:
        """Does this commit itself bring ``entry`` at ``raw_path`` (not a merge taking another parent's)?"""
        return all(self.ins.lookup(tree, raw_path) != entry for tree in self.others)

    def run(self) -> None:
        stack: list[tuple[bytes, bytes | None, bytes | None]] = [(b"", self.old_tree, self.new_tree)]
        while stack and not self.stopped and not self.ins.full:
            prefix, old, new = stack.pop()
            old_entries = self.ins.tree(old)
            new_entries = self.ins.tree(new)
            if not self.check and new_entries:
                self.twins(prefix, old_entries, new_entries)
            for name, n in new_entries.items():
                o = old_entries.get(name)
                if o == n:
                    continue
                raw = prefix + name
                if n.is_tree:
                    if o is not None and not o.is_tree:
                        self.deleted(raw, o)
                    if self.enter(raw):  # a refused folder is reported once and not entered (refused anyway)
                        stack.append((raw + b"/", o.oid if o is not None and o.is_tree else None, n.oid))
                    continue
                if o is not None and o.is_tree:
                    stack.append((raw + b"/", o.oid, None))
                    o = None
                self.changed(raw, o, n)
                if self.stopped or self.ins.full:
                    return
            for name, o in old_entries.items():
                if name in new_entries:
                    continue
                raw = prefix + name
                if o.is_tree:
                    stack.append((raw + b"/", o.oid, None))
                else:
                    self.deleted(raw, o)
        if self.count and not self.stopped and not self.ins.full:
            self.add("", self.tally.size(self.deletions()))

    # ------------------------------------------------------------ entries
    def enter(self, raw: bytes) -> bool:
        """Check a folder the commit adds or changes; False (reported, when checking) when it must not be
        entered."""
        path = raw.decode("utf-8", "surrogateescape")
        decision = self.tally.folder(path, len(raw))
        if self.check:
            self.add(path[:MAX_PATH_BYTES] if len(raw) > MAX_PATH_BYTES else path, decision)
        return decision.allowed

    def twins(self, prefix: bytes, old_entries: dict[bytes, _Entry], new_entries: dict[bytes, _Entry]) -> None:
        """Every name new in this folder whose collision key another name here has (the store's key)."""
        fresh = [name for name in new_entries if name not in old_entries]
        if not fresh:
            return
        by_key: dict[str, list[bytes]] = {}
        for name in new_entries:
            by_key.setdefault(caseless_key(name.decode("utf-8", "surrogateescape")), []).append(name)
        for name in fresh:
            spelled = by_key[caseless_key(name.decode("utf-8", "surrogateescape"))]
            other = next((n for n in spelled if n != name), None)
            if other is None:
                continue
            shown = (prefix + other).decode("utf-8", "surrogateescape") + ("/" if new_entries[other].is_tree else "")
            self.add((prefix + name).decode("utf-8", "surrogateescape"), decide_case_twin(shown))

    def changed(self, raw: bytes, old: _Entry | None, new: _Entry) -> None:
        path = raw.decode("utf-8", "surrogateescape")
        introduced = not self.others or self.introduced(raw, new)
        if old is None and introduced:
            within = self.tally.add(new.oid)
            if (self.check or self.count) and not within.allowed:
                self.add("", within)  # too many files: reading stops here
                self.stopped = True
                return
        elif self.count and introduced and old is not None:
            gitlink = old.mode == MODE_GITLINK or new.mode == MODE_GITLINK  # no blob of this repository
            blank = self.ins.blank
            self.tally.edit(path, partial(blank, new.oid), partial(blank, old.oid), note=False if gitlink else None)
        if not self.check:
            return
        if introduced and self.ins.guard is not None:
            self.add(path, self.ins.guard(path))
        self.add(path, self.check_file(path, new))

    def deleted(self, raw: bytes, old: _Entry) -> None:
        if self.others and not self.introduced(raw, None):
            return
        self.tally.delete(old.oid)
        if self.check and self.ins.guard is not None:
            path = raw.decode("utf-8", "surrogateescape")
            self.add(path, self.ins.guard(path))

    def check_file(self, path: str, entry: _Entry) -> Decision:
        """The one per-file check every door makes (the planner's, :meth:`Tally.file`), over the object's
        header and then its content, read only when the steps before allowed it."""
        try:
            return self.tally.file(path, _ObjectFacts(self.ins, entry))
        except _Malformed as exc:
            return Decision(False, exc.rule, exc.message)

    # ------------------------------------------------------------ counts
    def deletions(self) -> int:
        """Deleted files that are not renames (:meth:`Tally.deletions`): exact renames first, then git's
        similarity -- not for a merge, whose tree diff would pair what another parent brought."""
        return self.tally.deletions(None if self.others else self._similar_deletions)

    def _similar_deletions(self) -> int:
        """Deletions left once git's similarity detection pairs renamed-and-edited files (libgit2)."""
        repo = self.ins.repo
        try:
            old = repo[pygit2.Oid(raw=self.old_tree)] if self.old_tree else None
            new = repo[pygit2.Oid(raw=self.new_tree)]
            if not isinstance(old, pygit2.Tree) or not isinstance(new, pygit2.Tree):
                return self.tally.deleted
            diff = old.diff_to_tree(new)
            diff.find_similar(flags=DiffFind.FIND_RENAMES, rename_limit=RENAME_LIMIT)
            return sum(1 for d in diff.deltas if d.status == DeltaStatus.DELETED and d.old_file.mode != MODE_GITLINK)
        except (KeyError, ValueError, pygit2.GitError):
            return self.tally.deleted


def _walker(repo: pygit2.Repository, tip: pygit2.Oid, hidden: list[str], sort: SortMode) -> pygit2.Walker:
    walker = repo.walk(tip, sort)
    for h in hidden:
        try:
            walker.hide(pygit2.Oid(hex=h))
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return walker


def _range_base(
    tip: bytes,
    new: set[bytes],
    parents: dict[bytes, list[bytes]],
    settled: Callable[[bytes], bool] | None = None,
) -> tuple[bytes | None, list[bytes]]:
    """The range's base -- the first accepted commit on the tip's first-parent line (None: the line has
    none, so the empty tree) -- and the other accepted commits the range grows from (merged in).
    ``settled(commit)``: a new commit already judged elsewhere (a replica of this server made it, so it built
    on a tip it had vetted): the base stops there too, and what lies behind it is not counted again."""
    base: bytes | None = tip
    while base is not None and base in new and not (settled is not None and settled(base)):
        line = parents[base]
        base = line[0] if line else None
    boundary = {p for commit in new for p in parents[commit] if p not in new}
    return base, sorted(boundary - {base})


def inspect_update(
    repo: pygit2.Repository,
    old: str | None,
    new: str,
    policy: Policy,
    *,
    hide: Iterable[str] = (),
    guard: Guard | None = None,
    recorded: Recorded | None = None,
    max_commits: int | None = None,
    deadline: float | None = None,
    counts_per_commit: bool = False,
    range_from_recorded: bool = False,
) -> Inspection:
    """Check one branch update: ``old`` (None for a new branch) to ``new``.

    ``hide`` names commits already accepted (the origin's other branch tips): their history is not
    inspected again.  ``guard(path)`` is asked about every path a new commit changes (the pusher check).
    ``recorded(commit_id)`` says which commits the server made (see :data:`Recorded`).
    ``max_commits``: more new commits than this refuses the update unread; ``deadline`` (a
    :func:`time.monotonic` value): past it the update is refused.  ``counts_per_commit``: count deletions
    and additions per commit, not over the range.  ``range_from_recorded``: the range's counts start after the
    newest commit the server recorded as its own (``recorded``), not at the last accepted tip (the fetch: see
    :mod:`notegate.sync.fetchvet`).  Findings
    name the commit (the new tip for what is judged over the whole range, and for a non-fast-forward
    update), the path and the rule."""
    ins = _Inspector(repo, policy, guard, deadline, recorded)
    try:
        new_commit = repo[pygit2.Oid(hex=new)]
    except (KeyError, ValueError, pygit2.GitError):
        ins.malformed(new, "", "the new tip is not an object in the repository")
        return Inspection(tuple(ins.findings), 0, False)
    if not isinstance(new_commit, pygit2.Commit):
        ins.malformed(new, "", "the new tip is not a commit")
        return Inspection(tuple(ins.findings), 0, False)
    hidden = [h for h in (old, *hide) if h]
    if old:
        try:
            descends = old == new or repo.descendant_of(new, old)
        except (KeyError, ValueError, pygit2.GitError):
            descends = False
        ins.add(new, "", decide_fast_forward(descends))
    per_commit = counts_per_commit or not hidden  # not hidden: a first push into an empty origin, a first clone
    count = 0
    new_ids: set[bytes] = set()
    parents: dict[bytes, list[bytes]] = {}
    try:
        if max_commits is not None:
            for count, _commit in enumerate(_walker(repo, new_commit.id, hidden, SortMode.NONE), 1):
                if count > max_commits:
                    ins.add(new, "", decide_commit_count(max_commits, count), over_range=True)
                    return Inspection(tuple(ins.findings), 0, False)
            count = 0
        for commit in _walker(repo, new_commit.id, hidden, SortMode.TOPOLOGICAL | SortMode.REVERSE):
            if ins.overdue(new):
                break
            count += 1
            new_ids.add(commit.id.raw)
            parents[commit.id.raw] = [p.raw for p in commit.parent_ids]
            ins.commit(commit, count=per_commit)
            if ins.full:
                break
    except (KeyError, ValueError, pygit2.GitError):
        ins.malformed(new, "", "the history of the new tip cannot be read (a commit is missing or malformed)")
        return Inspection(tuple(ins.findings), count, ins.truncated)
    if new_ids and not ins.full and not ins.overdue(new):
        settled = None
        if range_from_recorded and recorded is not None:
            settled = lambda raw: recorded(raw.hex())  # noqa: E731 - one line, read once
        base, others = _range_base(new_commit.id.raw, new_ids, parents, settled)
        ins.range(new, new_commit.tree_id.raw, base, others, count=not per_commit)
    return Inspection(tuple(ins.findings), count, ins.truncated)


def explain_all(findings: Iterable[Finding]) -> list[str]:
    """Every finding's line, then one line per rule with what to do instead."""
    findings = list(findings)
    lines = [f.line() for f in findings]
    for rule in sorted({f.rule for f in findings}):
        remedy = remedy_for(rule)
        if remedy:
            lines.append(f"What to do instead [{rule}]: {remedy}")
    return lines
