"""Bring an existing Markdown/Obsidian folder into a vault, in commits of at most ``max_files_per_commit`` notes.

Hidden paths (``.obsidian/``, ``.git/``, ``.trash/``) are skipped, symlinks are refused (never followed),
and every skipped or refused file is reported with its reason.  Notes already in the vault are never
overwritten: identical ones are left alone, differing ones are refused and listed.  Each note meets the
same rules as any other write (the policy's decision for the importing caller, the content limits, the
credential decision, and the git door's content rules: the floor where sessions load a note), and each
commit goes through the notes service's recipe (trailers, lock, push before acknowledging), so a running
server picks it up.

Why batches: the git door refuses a commit adding more than ``max_files_per_commit`` files (the pre-receive
hook, and every server's fetch of the origin), so one huge import commit would be refused by the server's
own fetch.  Each batch is pushed before the next is built; if one fails, the batches already pushed stay,
and the refusal says how far the import got.  Running the same import again resumes: notes already in the
vault with the same content are left alone.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from notegate.errors import NotegateError, PathRejected
from notegate.policy import Action, Caller, decide, decide_credential, fixed_caller
from notegate.safety.rules import describe
from notegate.safety.secrets import scan_credentials
from notegate.services.notes import NotesService
from notegate.services.runtime import Environment
from notegate.vault.paths import NotePath
from notegate.vault.store import ABSENT, Change


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) — not notes, hidden
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) — notes we could not take
    commit: str | None = None  # the last commit made
    commits: list[str] = field(default_factory=list)  # every commit made, in order (one per batch)


def scan_source(src: Path) -> tuple[list[tuple[str, Path]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(candidates, skipped, refused) without following any symlink."""
    candidates: list[tuple[str, Path]] = []
    skipped: list[tuple[str, str]] = []
    refused: list[tuple[str, str]] = []
    for root, dirs, files in os.walk(src, followlinks=False):
        rel_root = Path(root).relative_to(src).as_posix()
        rel_root = "" if rel_root == "." else rel_root
        keep = []
        for d in sorted(dirs):
            rel = f"{rel_root}/{d}" if rel_root else d
            full = Path(root) / d
            if full.is_symlink():
                refused.append((rel + "/", "symlink: never followed"))
            elif d.startswith("."):
                skipped.append((rel + "/", "hidden folder"))
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            rel = f"{rel_root}/{name}" if rel_root else name
            full = Path(root) / name
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                refused.append((rel, "symlink: never followed"))
            elif name.startswith("."):
                skipped.append((rel, "hidden file"))
            elif not stat.S_ISREG(mode):
                refused.append((rel, "not a regular file"))
            elif not name.endswith(".md"):
                skipped.append((rel, "not a Markdown note"))
            else:
                candidates.append((rel, full))
    return candidates, skipped, refused


def importing_caller(login: str) -> Caller:
    """Who an import is written by: the owner at a shell, trusted, through the CLI's own connector."""
    return fixed_caller("cli:import", login)


def import_folder(
    notes: NotesService,
    env: Environment,
    caller: Caller,
    src: Path,
    *,
    message: str,
    progress: Callable[[int], None] | None = None,
    on_scanned: Callable[[int], None] | None = None,
    on_commit: Callable[[str, int, int], None] | None = None,
    allow_secrets: bool = False,
) -> ImportReport:
    """``on_scanned(n)`` hears how many candidate notes the folder holds (a progress bar's total);
    ``on_commit(commit, done, total)`` hears each batch once it is pushed (notes imported so far, of all).

    A note holding what looks like a credential is refused unless the owner insists (``allow_secrets``):
    history keeps it forever.
    """
    policy = notes.policy
    store = env.store
    report = ImportReport()
    candidates, report.skipped, report.refused = scan_source(src)
    if on_scanned is not None:
        on_scanned(len(candidates))
    snapshot = store.listing()
    listing = snapshot.notes
    changes: list[Change] = []
    seen_case: dict[str, str] = {}
    for rel, full in candidates:
        if progress is not None:
            progress(1)
        try:
            note = NotePath.parse(rel)
        except PathRejected as exc:
            report.refused.append((rel, f"{exc.rule}: {exc.message}"))
            continue
        decision = decide(policy, caller, Action.CREATE, note.value)
        if not decision.allowed:
            report.refused.append((rel, f"{decision.rule}: {decision.reason}"))
            continue
        data = full.read_bytes()
        if len(data) > policy.max_note_bytes:
            report.refused.append((rel, f"note-too-large: {len(data)} bytes"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            report.refused.append((rel, "content-not-utf8"))
            continue
        content = notes.decide_content(note.value, data)  # what the git door would refuse, refused per note
        if not content.allowed:
            report.refused.append((rel, f"{content.rule}: {content.reason}"))
            continue
        findings = scan_credentials(text)
        if findings:
            verdict = decide_credential(caller, allow_secrets)
            if not verdict.allowed:
                where = "; ".join(describe(f) for f in findings[:3])
                report.refused.append((rel, f"{verdict.rule}: {where} (rerun with --allow-secrets to insist)"))
                continue
        key = note.case_key()
        if key in seen_case:
            report.refused.append((rel, f"path-case-collision with {seen_case[key]} in the source"))
            continue
        seen_case[key] = note.value
        existing = snapshot.collision(note.value)
        if existing is not None:
            report.refused.append((rel, f"path-case-collision with {existing} in the vault"))
            continue
        current = listing.get(note.value, ABSENT)
        if current != ABSENT:
            if str(pygit2.hash(data)) == current:
                report.unchanged.append(note.value)
            else:
                report.refused.append((rel, "exists in the vault with other content; not overwritten"))
            continue
        changes.append(Change(note.value, data))
        report.added.append(note.value)
    batch = max(1, policy.max_files_per_commit)
    for start in range(0, len(changes), batch):
        part = changes[start : start + batch]
        label = message if len(changes) <= batch else f"{message} ({start // batch + 1}/{-(-len(changes) // batch)})"
        try:
            result = notes.commit_as(
                caller,
                env,
                part,
                {c.path: ABSENT for c in part},
                label,
                new_paths=tuple(c.path for c in part),
            )
        except NotegateError as exc:
            raise _stopped(exc, report, done=start, total=len(changes)) from exc
        report.commit = result.commit
        report.commits.append(result.commit)
        if on_commit is not None:
            on_commit(result.commit, start + len(part), len(changes))
    return report


def _stopped(exc: NotegateError, report: ImportReport, *, done: int, total: int) -> NotegateError:
    """The refusal of a batch, saying how far the import got (the pushed batches stay) and how to resume."""
    report.added = report.added[:done]
    so_far = (
        f"{done} of {total} notes were imported in {len(report.commits)} commit(s), the last {report.commit[:12]}"
        if report.commit
        else f"none of the {total} notes was imported"
    )
    return NotegateError(
        f"the import stopped at its commit {len(report.commits) + 1}: {so_far}; {exc.message}",
        rule=exc.rule,
        remedy=(exc.remedy + " " if exc.remedy else "")
        + "Then run the same notegate import again: notes already in the vault are left alone, so it resumes "
        "where it stopped.",
    )
