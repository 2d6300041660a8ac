"""`notegate sync DIR`: git-sync for a workstation's vault clone, the one the owner edits with Obsidian.

Theory of operation
-------------------
One *tick* (every ``sync_interval_seconds`` of the policy, or once with ``--once``):

1. **Look at the files.**  Every file under the clone except hidden paths (``.obsidian/``, ``.git``, ``.trash``
   and any other segment a file system or tool takes for hidden: :func:`policy.is_hidden_segment`), files the
   clone's own ``.gitignore`` leaves out, symlinks, and files that are neither a note nor an attachment of an
   allowed type (:func:`policy.decide_incoming_path`, rule ``file-type-refused``: left alone, quietly).  A
   changed file is committed only when it is **settled**: not modified within :data:`SETTLE_SECONDS`, and the
   same size, modification time and inode before and after it was read (two looks).  An unsettled file is left
   for the next tick, so a note is never committed half-written.
2. **Commit** what differs from ``main`` as one commit by the owner (message from :mod:`notegate.vault.commits`,
   connector ``sync:<device>``), planned by the server's planner and made by the server's recipe
   (:func:`notegate.services.recipe.run_plan` on the clone), and moved to only once the very validator the
   origin runs on a push (:func:`notegate.sync.incoming.inspect_update`) accepts it: a file refused is left out
   and named (exit :data:`EXIT_LEFT_OUT`); a commit-wide refusal -- more than ``max_deletions_per_commit``
   deletions, more than ``max_files_per_commit`` new files -- stops syncing this vault (:data:`EXIT_LOCAL`).
3. **Fetch** the origin's main (git CLI) and inspect every new commit with the same validator; anything refused
   stops syncing this vault with the files untouched (:data:`EXIT_INCOMING`).
4. **Replay** local commits on top of the origin, one at a time, when they touch different notes; the same
   note changed on both sides (to different contents) is a conflict: stop, files untouched
   (:data:`EXIT_CONFLICT`).  Nothing is ever merged.  Files are then brought to the new tip, each only if it
   is still exactly what ``main`` had (else: being edited -> next tick; edited and not committed -> conflict).
5. **Push** with the git CLI, so the origin's pre-receive hook judges it; refused -> stop
   (:data:`EXIT_PUSH`); the origin moved meanwhile -> fetch, replay and push again.

A stop is loud: the tick's report (printed, logged), the exit status, and the marker file
``.git/notegate-sync-stopped`` (JSON: rule, code, reason, what to do), which keeps every later tick from doing
anything until ``notegate sync --resume DIR``.  Resuming after a conflict or a refused local change rebuilds
the unpushed commits from the files: the origin's changes are written where the file is still as the local
branch had it, and the owner's file wins everywhere else.

Invariants: a refused or conflicting tick writes no work-tree file; work-tree files are written before
``main`` moves (a crash leaves files that the next tick sees as local edits equal to the origin's, which
replay as no-ops); hidden paths are never committed nor written; nothing here logs a note's contents.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from notegate.errors import OriginUnavailable
from notegate.policy import (
    MODE_GITLINK,
    Policy,
    decide_incoming_path,
    decide_incoming_size,
    is_blank,
    is_hidden_segment,
    sync_caller,
)
from notegate.policy.plan import Base, Intent, Plan, Proposed, Refusal, credential_refusals, plan
from notegate.services.recipe import CloneTarget, run_plan, trial_commit
from notegate.sync.fetchvet import vet_fetch
from notegate.sync.incoming import Finding, explain_all, inspect_update, shown_path
from notegate.sync.report import (  # re-exported: sync's answers live in sync/report.py
    EXIT_CODES,
    EXIT_CONFLICT,
    EXIT_INCOMING,
    EXIT_LEFT_OUT,
    EXIT_LOCAL,
    EXIT_OK,
    EXIT_PUSH,
    EXIT_RETRY,
    EXIT_USAGE,
    MARKER_NAME,
    Stop,
    TickReport,
    read_stop,
)
from notegate.sync.workclone import ACCEPTED, MAIN, TRACKING, Entry, WorkClone
from notegate.vault import durable
from notegate.vault.commits import sync_author_email, sync_message
from notegate.vault.store import Author, Change

__all__ = [
    "EXIT_CODES",
    "EXIT_CONFLICT",
    "EXIT_INCOMING",
    "EXIT_LEFT_OUT",
    "EXIT_LOCAL",
    "EXIT_OK",
    "EXIT_PUSH",
    "EXIT_RETRY",
    "EXIT_USAGE",
    "MARKER_NAME",
    "SETTLE_SECONDS",
    "Stop",
    "Syncer",
    "TickReport",
    "read_stop",
    "run_loop",
]

#: A file modified this recently is still being written: the next tick looks again.
SETTLE_SECONDS = 3.0
#: Fetch-replay-push rounds per tick when the origin keeps moving.
MAX_ATTEMPTS = 3
_TEMP_PREFIX = ".notegate-sync-"  # hidden: the scan never picks up a file being written by the sync itself

Stat = tuple[int, int, int]  # size, mtime_ns, inode


class _Halt(Exception):  # internal: carries a Stop out of the tick
    def __init__(self, stop: Stop) -> None:
        self.stop = stop


class _Postpone(Exception):  # internal: the origin's changes wait for the next tick
    pass


@dataclass
class _Scan:
    changes: dict[str, bytes | None]
    pending: list[str]
    left_out: list[Finding]
    ignored: int


class Syncer:
    """One workstation vault clone and the rules it syncs under."""

    def __init__(
        self,
        directory: Path,
        policy: Policy,
        *,
        owner: str,
        device: str,
        git_env: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        settle_seconds: float = SETTLE_SECONDS,
        between_looks: Callable[[str], None] | None = None,
    ) -> None:
        self.clone = WorkClone(directory, git_env)
        self.policy = policy
        self.owner = owner
        self.device = device
        self.clock = clock
        self.settle_seconds = settle_seconds
        self.between_looks = between_looks  # tests: called after a file is read, before the second look
        self.marker = self.clone.git_dir / MARKER_NAME

    # ------------------------------------------------------------ the marker
    def stopped(self) -> Stop | None:
        return read_stop(self.marker)

    def _halt(self, stop: Stop) -> Stop:
        stop = Stop(stop.code, stop.rule, stop.message, stop.lines, stop.conflicts, self.clock())
        temporary = self.marker.with_name(MARKER_NAME + ".tmp")
        temporary.write_text(json.dumps(stop.to_json(), indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, self.marker)
        return stop

    # ------------------------------------------------------------ one tick
    def tick(self) -> TickReport:
        report = TickReport()
        earlier = self.stopped()
        if earlier is not None:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(earlier.stopped_at))
            report.stop = Stop(
                earlier.code,
                rule="sync-stopped",
                message=f"syncing this vault stopped at {when}: [{earlier.rule}] {earlier.message}",
                lines=earlier.lines,
                conflicts=earlier.conflicts,
                stopped_at=earlier.stopped_at,
            )
            return report
        try:
            self._tick(report)
        except _Halt as halt:
            report.stop = self._halt(halt.stop)
        except OriginUnavailable as exc:
            report.retry = exc.explain()
        return report

    def _tick(self, report: TickReport) -> None:
        local = self.clone.ref(MAIN)
        scan = self._scan(self.clone.files(local))
        report.pending, report.left_out, report.ignored = scan.pending, scan.left_out, scan.ignored
        if scan.changes:
            committed = self._commit_local(local, scan)
            if committed is not None:
                report.committed = local = committed
        for _attempt in range(MAX_ATTEMPTS):
            accepted = self._fetch_and_inspect()
            try:
                tip, written = self._replay(local, accepted)
            except _Postpone as why:
                report.postponed = str(why)
                return
            report.pulled += written
            local = tip
            if tip is None or tip == accepted:
                return
            pushed = self.clone.push(tip)
            if pushed.ok:
                self.clone.set_ref(ACCEPTED, tip)
                self.clone.set_ref(TRACKING, tip)
                report.pushed = tip
                return
            if not pushed.moved:
                raise _Halt(
                    Stop(
                        EXIT_PUSH,
                        rule="sync-push-refused",
                        message=f"the origin refused the push of {tip[:12]}; the files here are untouched.",
                        lines=pushed.lines,
                    )
                )
        report.postponed = f"the origin kept moving during {MAX_ATTEMPTS} attempts"

    # ------------------------------------------------------------ 1. look at the files
    def _scan(self, head: dict[str, Entry]) -> _Scan:
        root = self.clone.workdir
        now = self.clock()
        scan = _Scan({}, [], [], 0)
        present: set[str] = set()
        for path, lstat in self._walk(root):
            present.add(path)
            if not stat.S_ISREG(lstat.st_mode):
                scan.ignored += 1  # a symlink or device is never a note
                continue
            kind = decide_incoming_path(self.policy, path)
            if not kind.allowed:
                if kind.rule == "file-type-refused" or (path not in head and self.clone.is_ignored(path)):
                    scan.ignored += 1
                else:
                    scan.left_out.append(Finding("0" * 40, path, kind.rule, kind.reason))
                continue
            if path not in head and self.clone.is_ignored(path):
                scan.ignored += 1
                continue
            sized = decide_incoming_size(self.policy, kind, lstat.st_size)
            if not sized.allowed:
                scan.left_out.append(Finding("0" * 40, path, sized.rule, sized.reason))
                continue
            data = self._two_looks(root / path, lstat)
            entry = head.get(path)
            if data is not None and entry is not None and entry == (0o100644, self.clone.hash(data)):
                continue  # unchanged, however recently touched
            if data is None or abs(now - lstat.st_mtime) < self.settle_seconds:
                scan.pending.append(path)
                continue
            scan.changes[path] = data
        for path in head:
            if path not in present:
                scan.changes[path] = None
        return scan

    def _walk(self, root: Path) -> Iterable[tuple[str, os.stat_result]]:
        """Every non-hidden entry that is not a folder, as (vault path, lstat); never follows a symlink."""
        stack = [""]
        while stack:
            prefix = stack.pop()
            try:
                entries = sorted(os.scandir(root / prefix) if prefix else os.scandir(root), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if is_hidden_segment(entry.name):
                    continue
                path = prefix + entry.name
                try:
                    lstat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(lstat.st_mode):
                    stack.append(path + "/")
                else:
                    yield path, lstat

    def _two_looks(self, file: Path, first: os.stat_result) -> bytes | None:
        """The file's bytes when nothing changed it while it was read (same stat before and after), else None."""
        try:
            data = _read_no_follow(file)
            if self.between_looks is not None:
                self.between_looks(str(file.relative_to(self.clone.workdir).as_posix()))
            second = os.lstat(file)
        except OSError:
            return None
        if _stat_of(second) != _stat_of(first) or len(data) != first.st_size:
            return None
        return data

    # ------------------------------------------------------------ 2. commit
    def _commit_local(self, parent: str | None, scan: _Scan) -> str | None:
        candidate, left_out, stop = self.plan_local(parent, scan.changes)
        scan.left_out.extend(left_out)
        if stop is not None:
            raise _Halt(stop)
        if candidate is not None:
            self.clone.move_main(candidate)
        return candidate

    def plan_local(
        self, parent: str | None, changes: dict[str, bytes | None]
    ) -> tuple[str | None, list[Finding], Stop | None]:
        """What of ``changes`` may be committed on ``parent``: the candidate commit (made, no ref moved; None
        when nothing is left), the files left out, or the stop of a change refused as a whole.

        The commit is planned and made as the server's are: the planner (:func:`notegate.policy.plan.plan`,
        ``Intent(op="sync")``: every file, the change's counts, then credentials -- the owner's workstation is
        trusted, so a credential is ``credential-warning``: commit it by hand with git if it really belongs in
        the vault) and the recipe (:func:`notegate.services.recipe.run_plan`).  The commit is then read by the
        very validator the origin runs on a push (:func:`notegate.sync.incoming.inspect_update`), which sees
        what only git shows (folders, case twins) and, for a change the planner refused, names every file it
        refuses and judges the change whole (on a trial commit that never lands).  A refused file is left out
        and the rest judged again; the verdict is the validator's first, then the planner's credentials."""
        changes = dict(changes)
        left_out: list[Finding] = []
        caller = sync_caller(self.device, self.owner)
        author = Author(caller.display_name, caller.login)
        # A workstation's commit reaches the vault by push: it speaks in its own voice (vault/commits.py)
        target = CloneTarget(self.clone, parent, sync_author_email(caller.login, self.device))
        while changes:
            message = sync_message(_summary(self.device, changes), caller.connector_id)
            proposed = [Change(p, d) for p, d in changes.items()]
            planned = plan(
                self.policy,
                caller,
                self._base(parent, changes),
                [Proposed(c.path, c.data) for c in proposed],
                Intent(op="sync", scan_credentials=True),
            )
            if isinstance(planned, Plan):
                candidate = run_plan(target, planned, proposed, author, message, books=None).commit
            else:
                candidate = trial_commit(target, proposed, author, message)
            inspection = inspect_update(self.clone.repo, parent, candidate, self.policy)
            whole = [f for f in inspection.findings if not f.path]
            if whole:
                first = whole[0]
                return None, left_out, self._refused_whole(first.rule, first.what, inspection.findings)
            refused = {f.path for f in inspection.findings}
            found = list(inspection.findings)
            if not refused:
                if isinstance(planned, Plan):
                    return candidate, left_out, None
                credentials = credential_refusals(caller, [Proposed(p, d) for p, d in changes.items()])
                if not credentials:  # the planner refused what the validator accepts: never commit it
                    return None, left_out, self._refused_whole(planned.rule, planned.reason, ())
                refused = {r.path for r in credentials}
                found = [Finding("0" * 40, r.path, r.rule, r.reason) for r in credentials]
            left_out.extend(Finding("0" * 40, f.path, f.rule, f.what) for f in found)
            for path in list(changes):
                if any(path == r or path.startswith(r + "/") for r in refused):
                    del changes[path]
        return None, left_out, None

    @staticmethod
    def _refused_whole(rule: str, what: str, findings: Iterable[Finding]) -> Stop:
        return Stop(
            EXIT_LOCAL,
            rule=rule,
            message=f"{what} Nothing was committed and the files here are untouched; "
            "deleted notes are still in the last commit (git -C DIR restore PATH brings one back).",
            lines=tuple(explain_all(findings)),
        )

    def _base(self, parent: str | None, changes: dict[str, bytes | None]) -> Base:
        """The planner's facts about ``parent`` as the git door reads them from git: a file's blob, whether it
        is a note (emptied notes count as deletions), whether a blob is blank (one larger than a note may be
        never is), and the deletions git's similarity detection leaves (asked only past the limit)."""
        files = self.clone.files(parent)
        policy = self.policy

        def is_note(path: str) -> bool:
            entry = files.get(path)
            return (
                entry is not None
                and entry[0] != MODE_GITLINK
                and decide_incoming_path(policy, path).rule == "incoming-note"
            )

        def blank(blob: str) -> bool:
            data = self.clone.blob(blob)
            return len(data) <= policy.max_note_bytes and is_blank(data)

        return Base(
            blob=lambda path: files[path][1] if path in files else None,
            is_note=is_note,
            blank=blank,
            similar=lambda: self.clone.similar_deletions(parent, changes),
        )

    # ------------------------------------------------------------ 3. fetch
    def _fetch_and_inspect(self) -> str | None:
        accepted = self.clone.ref(ACCEPTED)
        fetched = self.clone.fetch()
        if fetched is None:
            if accepted is not None:
                raise _Halt(
                    Stop(
                        EXIT_INCOMING,
                        rule="sync-incoming-refused",
                        message=f"the origin no longer has a main branch (last good commit {accepted[:12]}).",
                    )
                )
            return None
        if fetched == accepted:
            return accepted
        # The server's own judgement of a fetch: a finding the tip has repaired (reverted) no longer counts.
        verdict = vet_fetch(self.clone.repo, accepted, fetched, self.policy)
        if not verdict.ok:
            good = f"last good origin commit {accepted[:12]}" if accepted else "no origin commit was accepted yet"
            raise _Halt(
                Stop(
                    EXIT_INCOMING,
                    rule="sync-incoming-refused",
                    message=f"the origin's main moved to {fetched[:12]}, which the policy refuses "
                    f"({len(verdict.counted)} finding(s); {good}). Nothing was taken from it and the files "
                    "here are untouched.",
                    lines=tuple(explain_all(verdict.counted or verdict.inspection.findings)),
                )
            )
        self.clone.set_ref(ACCEPTED, fetched)
        self.clone.set_ref(TRACKING, fetched)
        return fetched

    # ------------------------------------------------------------ 4. replay
    def _replay(self, local: str | None, accepted: str | None) -> tuple[str | None, int]:
        """The new tip (local commits on top of ``accepted``) with the work tree brought to it; (tip, files
        written)."""
        clone = self.clone
        if accepted is None or local == accepted:
            return local, 0
        if local is not None and clone.descends(local, accepted):
            return local, 0  # only local commits on top: push them
        fast_forward = local is None or clone.descends(accepted, local)
        tip = accepted if fast_forward else self._replay_commits(local, accepted)
        written = self._write_worktree(clone.files(local), clone.files(tip))
        clone.move_main(tip)
        return tip, written

    def _replay_commits(self, local: str, accepted: str) -> str:
        clone = self.clone
        base = clone.merge_base(local, accepted)
        base_files, origin_files = clone.files(base), clone.files(accepted)
        upstream = {p for p in base_files.keys() | origin_files.keys() if base_files.get(p) != origin_files.get(p)}
        plans: list[tuple[str, dict[str, Entry | None]]] = []
        conflicts: set[str] = set()
        for commit in clone.commits_since(local, accepted):
            parent = clone.commit_meta(commit)[4]
            before, after = clone.files(parent), clone.files(commit)
            changed = {p: after.get(p) for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
            conflicts |= {p for p, e in changed.items() if p in upstream and origin_files.get(p) != e}
            plans.append((commit, changed))
        if conflicts:
            raise _Halt(self._conflict(sorted(conflicts), "changed here and on the origin"))
        tip_files = dict(origin_files)
        steps: list[tuple[str, dict[str, bytes | None]]] = []
        for commit, changed in plans:
            delta = {p: None if e is None else clone.blob(e[1]) for p, e in changed.items() if tip_files.get(p) != e}
            if not delta:
                continue
            steps.append((commit, delta))
            for p, e in changed.items():
                if e is None:
                    tip_files.pop(p, None)
                else:
                    tip_files[p] = (0o100644, e[1])
        tip = accepted
        if steps:
            tip = self._replay_planned(accepted, origin_files, tip_files, steps)
        if tip != accepted:
            inspection = inspect_update(clone.repo, accepted, tip, self.policy)
            if not inspection.ok:
                raise _Halt(self._local_refused(inspection.findings))
        return tip

    def _replay_planned(
        self,
        accepted: str,
        origin_files: dict[str, Entry],
        tip_files: dict[str, Entry],
        steps: list[tuple[str, dict[str, bytes | None]]],
    ) -> str:
        """The local commits made again on ``accepted``, one per step, each keeping its author, time and
        message.  They carry out one plan: the planner's verdict on their net change (``tip_files`` against the
        origin's), judged whole as the origin's hook judges the push; every file they bring is judged again, in
        every commit, by the validator afterwards (:meth:`_replay_commits`)."""
        clone = self.clone
        net = {
            p: None if p not in tip_files else clone.blob(tip_files[p][1])
            for p in origin_files.keys() | tip_files.keys()
            if origin_files.get(p) != tip_files.get(p)
        }
        caller = sync_caller(self.device, self.owner)
        planned = plan(
            self.policy,
            caller,
            self._base(accepted, net),
            [Proposed(p, d) for p, d in sorted(net.items())],
            Intent(op="sync-replay"),
        )
        if isinstance(planned, Refusal):
            raise _Halt(self._local_refused([Finding("0" * 40, planned.path, planned.rule, planned.reason)]))
        tip = accepted
        for commit, delta in steps:
            name, email, when, message, _parent = clone.commit_meta(commit)
            target = CloneTarget(clone, tip, email, when)
            changes = [Change(p, d) for p, d in delta.items()]
            tip = run_plan(target, planned, changes, Author(name, caller.login), message, books=None).commit
        return tip

    @staticmethod
    def _local_refused(findings: Iterable[Finding]) -> Stop:
        return Stop(
            EXIT_LOCAL,
            rule="sync-local-refused",
            message="local commits not yet pushed hold what the policy refuses; nothing was pushed "
            "and the files here are untouched.",
            lines=tuple(explain_all(findings)),
        )

    def _conflict(self, paths: list[str], how: str) -> Stop:
        return Stop(
            EXIT_CONFLICT,
            rule="sync-conflict",
            message=f"{len(paths)} note(s) {how}: {', '.join(shown_path(p) for p in paths[:10])}"
            + (" …" if len(paths) > 10 else "")
            + ". Nothing was merged and the files here are untouched.",
            conflicts=tuple(paths),
        )

    # ------------------------------------------------------------ the work tree
    def _write_worktree(self, old: dict[str, Entry], new: dict[str, Entry]) -> int:
        """Bring the files from ``old`` (main) to ``new``: each only if it is still exactly what main had."""
        paths = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
        now = self.clock()
        seen: dict[str, Stat | None] = {}
        edited: list[str] = []
        for path in paths:
            current, blob = self._working(path)
            if blob == (old[path][1] if path in old else None):
                seen[path] = current
                continue
            if current is not None and abs(now - current[1] / 1e9) < self.settle_seconds:
                raise _Postpone(f"{shown_path(path)} is being edited here")
            edited.append(path)
        if edited:
            raise _Halt(self._conflict(edited, "edited here (not committed) and changed on the origin"))
        for count, path in enumerate(paths):
            if self._working(path)[0] != seen[path]:
                raise _Postpone(f"{shown_path(path)} changed while the origin's changes were written ({count} done)")
            self._put(path, None if path not in new else self.clone.blob(new[path][1]))
        return len(paths)

    def _working(self, path: str) -> tuple[Stat | None, str | None]:
        """The work-tree file's stat and blob id (None, None when absent; a non-file counts as edited)."""
        file = self.clone.workdir / path
        try:
            lstat = os.lstat(file)
        except FileNotFoundError:
            return None, None
        except OSError:
            return (0, 0, 0), "unreadable"
        if not stat.S_ISREG(lstat.st_mode):
            return _stat_of(lstat), "not-a-file"
        try:
            return _stat_of(lstat), self.clone.hash(_read_no_follow(file))
        except OSError:
            return _stat_of(lstat), "unreadable"

    def _put(self, path: str, data: bytes | None) -> None:
        """Write (atomically, through no symlink) or delete one work-tree file."""
        root = self.clone.workdir
        parts = path.split("/")
        folder = root
        for part in parts[:-1]:
            folder = folder / part
            if folder.is_symlink():
                raise _Halt(self._conflict([path], "sit under a folder that is a symlink here"))
            if data is not None:
                folder.mkdir(exist_ok=True)
        target = folder / parts[-1]
        if data is None:
            if target.exists() or target.is_symlink():
                target.unlink()
            while folder != root:
                try:
                    folder.rmdir()  # only when empty
                except OSError:
                    break
                folder = folder.parent
            return
        temporary = folder / f"{_TEMP_PREFIX}{secrets.token_hex(6)}.tmp"
        with open(temporary, "xb") as handle:
            handle.write(data)
            handle.flush()
            durable.flush_file(handle.fileno())  # the bytes before the name: a cut never leaves the note empty
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
        durable.flush_folder(folder)

    # ------------------------------------------------------------ resume
    def resume(self) -> TickReport:
        """Clear the stop and tick again.  After a conflict or a refused local change, the unpushed commits
        are dropped and rebuilt from the files: the origin's version is written where a file is still as the
        local branch had it (and only the origin changed it); everywhere else the owner's file wins."""
        earlier = self.stopped()
        if earlier is None:
            return self.tick()
        if earlier.rule in ("sync-conflict", "sync-push-refused", "sync-local-refused"):
            self._rebuild_from_files()
        self.marker.unlink(missing_ok=True)
        return self.tick()

    def _rebuild_from_files(self) -> None:
        clone = self.clone
        local, accepted = clone.ref(MAIN), clone.ref(ACCEPTED)
        if local is None or accepted is None or local == accepted:
            return
        base = clone.merge_base(local, accepted)
        local_files, origin_files, base_files = clone.files(local), clone.files(accepted), clone.files(base)
        for path in sorted(
            p for p in local_files.keys() | origin_files.keys() if local_files.get(p) != origin_files.get(p)
        ):
            only_origin = local_files.get(path) == base_files.get(path)
            _stat, blob = self._working(path)
            if only_origin and blob == (local_files[path][1] if path in local_files else None):
                self._put(path, None if path not in origin_files else clone.blob(origin_files[path][1]))
        clone.move_main(accepted)


def _stat_of(s: os.stat_result) -> Stat:
    return s.st_size, s.st_mtime_ns, s.st_ino


def _read_no_follow(file: Path) -> bytes:
    fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _summary(device: str, changes: dict[str, bytes | None]) -> str:
    paths = sorted(changes)
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return f"sync from {device}: {len(paths)} change(s): {paths[0]}{more}"


def run_loop(syncer: Syncer, stop: threading.Event, say: Callable[[str], None]) -> int:
    """Tick every ``sync_interval_seconds`` until ``stop`` is set (a signal) or syncing stops; returns the exit
    status (0 when stopped by a signal, the stop's code when syncing stopped)."""
    while not stop.is_set():
        report = syncer.tick()
        for line in report.lines():
            say(line)
        if report.stop is not None:
            return report.code
        stop.wait(syncer.policy.sync_interval_seconds)
    return EXIT_OK
